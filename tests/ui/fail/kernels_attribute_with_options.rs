// Refused: options given to `#[gsync::kernels]`, which takes none.
#[gsync::kernels(threads = 256)]
mod m {
    #[grid_phases]
    fn k(a: &mut [u32]) {
        a[0] = 1;
    }
}

fn main() {}
