#[gsync::kernels]
mod m {
    #[device]
    fn gpu_sync() -> u32 {
        0
    }

    #[grid_phases]
    fn k(a: &mut [u32]) {
        a[0] = 1;
    }
}

fn main() {}
