use gsync::prelude::*;

#[grid_phases]
fn k(keys: &[u32], out: &mut [u32]) {
    let tile = shared_array::<u32, 64>();
    tile.copy_chunk_async::<4>(0, keys, 0);
    out[0] = tile[0];
}

fn main() {}
