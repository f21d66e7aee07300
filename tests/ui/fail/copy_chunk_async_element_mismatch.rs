use gsync::prelude::*;

#[grid_phases]
fn k(keys: &[f32], out: &mut [u32]) {
    let mut tile = shared_array::<u32, 64>();
    tile.copy_chunk_async::<4>(0, keys, 0);
    wait_async_copies();
    out[0] = tile[0];
}

fn main() {}
