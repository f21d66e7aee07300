use gsync::prelude::*;

#[gsync::kernels]
mod m {
    const PER_WARP: usize = BLOCK_SIZE / 32;

    #[grid_phases]
    fn k(keys: &[u32], out: &mut [u32]) {
        let v = keys.load_chunk::<PER_WARP>(0);
        out[0] = v[0];
    }
}

fn main() {}
