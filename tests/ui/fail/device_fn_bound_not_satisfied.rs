#[gsync::kernels]
mod m {
    #[device]
    fn bits<T: Int>(x: T) -> u32 {
        x.count_ones()
    }

    #[grid_phases]
    fn k(a: &mut [f32], out: &mut [u32]) {
        out[0] = bits(a[0]);
    }
}

fn main() {}
