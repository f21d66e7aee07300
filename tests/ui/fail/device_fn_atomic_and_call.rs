#[gsync::kernels]
mod m {
    #[device]
    fn first(a: &[u32]) -> u32 {
        a[0]
    }

    #[grid_phases]
    fn k(a: &mut [u32], b: &mut [u32]) {
        let x = b.atomic_add(0, 1) + first(b);
        a[0] = x;
    }
}

fn main() {}
