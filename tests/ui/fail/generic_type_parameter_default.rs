// Refused: a default for a device function's type parameter.
#[gsync::kernels]
mod m {
    #[device]
    fn zero<T: Num = u32>() -> T {
        T::ZERO
    }

    #[grid_phases]
    fn k(a: &mut [u32]) {
        a[0] = zero::<u32>();
    }
}

fn main() {}
