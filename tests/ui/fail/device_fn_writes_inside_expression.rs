#[gsync::kernels]
mod m {
    #[device]
    fn take(a: &mut [u32]) -> u32 {
        a[0] += 1;
        a[0]
    }

    #[grid_phases]
    fn k(a: &mut [u32]) {
        let x = take(a) + 1;
        a[1] = x;
    }
}

fn main() {}
