#[gsync::kernels]
mod m {
    #[device]
    fn copy(from: &[u32], to: &mut [u32]) {
        to[0] = from[1];
    }

    #[grid_phases]
    fn k(a: &mut [u32]) {
        copy(a, a);
    }
}

fn main() {}
