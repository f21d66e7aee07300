#[gsync::kernels]
mod m {
    const TABLE: [u32; 4] = [1, 2, 4, 8];

    #[grid_phases]
    pub fn k(a: &mut [u32]) {
        TABLE[0] = a[0];
    }
}

fn main() {}
