// Refused: a device function parameter that is a slice of `bool`.
#[gsync::kernels]
mod m {
    #[device]
    fn first(flags: &[bool]) -> bool {
        flags[0]
    }

    #[grid_phases]
    fn k(a: &mut [u32]) {
        a[0] = 1;
    }
}

fn main() {}
