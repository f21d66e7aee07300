// Refused: a device function that returns something other than a scalar.
#[gsync::kernels]
mod m {
    #[device]
    fn pair(x: u32) -> [u32; 2] {
        [x, x]
    }

    #[grid_phases]
    fn k(a: &mut [u32]) {
        a[0] = 1;
    }
}

fn main() {}
