#[gsync::kernels]
mod m {
    const N: u32 = 4;

    #[grid_phases]
    pub fn k(a: &mut [u32], N: u32) {
        a[0] = N;
    }
}

fn main() {}
