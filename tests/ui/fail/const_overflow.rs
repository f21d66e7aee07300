#[gsync::kernels]
mod m {
    const BIG: u8 = 200 + 100;

    #[grid_phases]
    fn k(a: &mut [u8]) {
        a[0] = BIG;
    }
}

fn main() {}
