// Refused: a slice parameter of a device function declared as a `mut` binding.
#[gsync::kernels]
mod m {
    #[device]
    fn clear(mut t: &mut [u32]) {
        t[0] = 0;
    }

    #[grid_phases]
    fn k(a: &mut [u32]) {
        a[0] = 1;
    }
}

fn main() {}
