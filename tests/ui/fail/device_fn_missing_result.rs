#[gsync::kernels]
mod m {
    #[device]
    fn twice(x: u32) -> u32 {
        let y = x * 2;
    }

    #[grid_phases]
    fn k(a: &mut [u32]) {
        a[0] = twice(2);
    }
}

fn main() {}
