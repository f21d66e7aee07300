use gsync::prelude::*;

#[gsync::kernels]
mod m {
    #[grid_phases]
    fn k(out: &mut [u32]) {
        let v = [0u32; BLOCK_SIZE / 32];
        out.store_chunk(0, v);
    }
}

fn main() {}
