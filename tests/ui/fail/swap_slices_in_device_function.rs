#[gsync::kernels]
mod m {
    #[device]
    fn flip(a: &mut [f32], b: &mut [f32]) {
        std::mem::swap(&mut a, &mut b);
    }

    #[grid_phases]
    fn k(a: &mut [f32], b: &mut [f32]) {
        flip(a, b);
    }
}

fn main() {}
