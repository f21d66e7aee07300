#[gsync::kernels]
mod m {
    #[device]
    fn clear(b: &mut [u32]) {
        b[0] = 0;
    }

    #[device]
    fn touch(a: &[u32]) {
        clear(a);
    }

    #[grid_phases]
    fn k(a: &mut [u32]) {
        touch(a);
    }
}

fn main() {}
