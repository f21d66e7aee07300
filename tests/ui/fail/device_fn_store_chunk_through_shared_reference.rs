#[gsync::kernels]
mod m {
    #[device]
    fn touch(a: &[u32]) {
        let v = [1u32, 2, 3, 4];
        a.store_chunk(0, v);
    }

    #[grid_phases]
    fn k(a: &mut [u32]) {
        touch(a);
    }
}

fn main() {}
