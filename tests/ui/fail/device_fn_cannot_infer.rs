#[gsync::kernels]
mod m {
    #[device]
    fn zero<T: Num>() -> T {
        T::ZERO
    }

    #[grid_phases]
    fn k(a: &mut [f32]) {
        let z = zero();
        a[0] = 1.0;
    }
}

fn main() {}
