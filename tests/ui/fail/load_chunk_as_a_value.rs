use gsync::prelude::*;

#[grid_phases]
fn k(keys: &[u32], out: &mut [u32]) {
    out[0] = keys.load_chunk::<4>(0)[1];
}

fn main() {}
