// Refused: a type argument that is not an element type.
#[gsync::kernels]
mod m {
    #[device]
    fn zero<T: Num>() -> T {
        T::ZERO
    }

    #[grid_phases]
    fn k(a: &mut [f32]) {
        a[0] = zero::<[f32; 2]>();
    }
}

fn main() {}
