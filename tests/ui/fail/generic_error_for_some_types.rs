#[gsync::kernels]
mod m {
    #[grid_phases]
    fn negate<T: Num>(a: &mut [T]) {
        for i in grid_stride(0..a.len()) {
            a[i] = -a[i];
        }
    }
}

fn main() {}
