#[gsync::kernels]
mod m {
    const TABLE: [u32; 4] = [1, 2, 4];

    #[grid_phases]
    pub fn k(a: &mut [u32]) {
        a[0] = TABLE[0];
    }
}

fn main() {}
