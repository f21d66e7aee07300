// Refused: a device function parameter that is neither a slice nor a scalar.
#[gsync::kernels]
mod m {
    #[device]
    fn get(x: &u32) -> u32 {
        *x
    }

    #[grid_phases]
    fn k(a: &mut [u32]) {
        a[0] = 1;
    }
}

fn main() {}
