#[gsync::kernels]
mod m {
    #[device]
    fn down(n: u32) -> u32 {
        if n == 0 { 0 } else { down(n - 1) }
    }

    #[grid_phases]
    fn k(a: &mut [u32]) {
        a[0] = down(3);
    }
}

fn main() {}
