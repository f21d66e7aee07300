#[gsync::kernels]
mod m {
    #[device]
    fn clear(t: &mut [u32]) {
        t[0] = 0;
    }

    #[grid_phases]
    fn k(a: &mut [u32]) {
        let mut tile = shared_array::<u32, 32>();
        clear(&tile);
        a[0] = tile[0];
    }
}

fn main() {}
