#[gsync::kernels]
mod m {
    #[device]
    fn half(x: f32) -> f32 {
        x / 2.0
    }

    #[grid_phases]
    fn k(a: &mut [f32], n: u32) {
        a[0] = half(n);
    }
}

fn main() {}
