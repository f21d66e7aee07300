#[gsync::kernels]
mod m {
    #[device]
    fn touch(a: &[u32]) {
        a.with_lock(0, || {});
    }

    #[grid_phases]
    fn k(a: &mut [u32]) {
        touch(a);
    }
}

fn main() {}
