#[gsync::kernels]
mod m {
    /// Negative at every block size a GPU allows (1 to 1024).
    const SPARE: usize = BLOCK_SIZE - 2000;

    #[grid_phases]
    fn k(a: &mut [u32]) {
        a[0] = SPARE as u32;
    }
}

fn main() {}
