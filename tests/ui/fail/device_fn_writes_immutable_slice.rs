#[gsync::kernels]
mod m {
    #[device]
    fn clear(a: &mut [u32]) {
        a[0] = 0;
    }

    #[grid_phases]
    fn k(a: &[u32]) {
        clear(a);
    }
}

fn main() {}
