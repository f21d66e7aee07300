#[gsync::kernels]
mod m {
    #[device]
    fn thread_idx_x() -> u32 {
        7
    }

    #[grid_phases]
    fn k(a: &mut [u32]) {
        a[0] = 1;
    }
}

fn main() {}
