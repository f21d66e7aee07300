// Refused: a turbofish with more type arguments than the device function has type parameters.
#[gsync::kernels]
mod m {
    #[device]
    fn zero<T: Num>() -> T {
        T::ZERO
    }

    #[grid_phases]
    fn k(a: &mut [f32]) {
        a[0] = zero::<f32, u32>();
    }
}

fn main() {}
