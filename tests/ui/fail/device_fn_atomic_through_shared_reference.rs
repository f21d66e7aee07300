#[gsync::kernels]
mod m {
    #[device]
    fn touch(a: &[u32]) {
        let _ = a.atomic_add(0, 1);
    }

    #[grid_phases]
    fn k(a: &mut [u32]) {
        touch(a);
    }
}

fn main() {}
