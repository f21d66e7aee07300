// Refused: a device function named like the fused builtin `max3`.
#[gsync::kernels]
mod m {
    #[device]
    fn max3(a: i32, b: i32, c: i32) -> i32 {
        a.max(b).max(c)
    }

    #[grid_phases]
    fn k(a: &mut [i32]) {
        a[0] = 1;
    }
}

fn main() {}
