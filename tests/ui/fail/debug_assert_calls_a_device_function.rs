#[gsync::kernels]
mod m {
    #[device]
    fn check(x: u32) -> bool {
        x < 10
    }

    #[grid_phases]
    pub fn k(a: &mut [u32]) {
        debug_assert!(check(a[0]));
        a[1] = 1;
    }
}

fn main() {}
