use gsync::prelude::*;

#[grid_phases]
fn k(keys: &[u16], out: &mut [u16]) {
    let mut tile = shared_array::<u16, 64>();
    tile.copy_chunk_async::<1>(0, keys, 0);
    wait_async_copies();
    out[0] = tile[0];
}

fn main() {}
