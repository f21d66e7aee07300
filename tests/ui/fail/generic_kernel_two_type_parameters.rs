#[gsync::kernels]
mod m {
    #[grid_phases]
    fn k<T: Num, U: Float>(a: &mut [T], b: &[U]) {
        a[0] = a[1];
    }
}

fn main() {}
