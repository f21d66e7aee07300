use gsync::prelude::*;

#[grid_phases]
fn k(keys: &[u32], out: &mut [u32]) {
    let v = keys.load_chunk::<4>(0, 1);
    out[0] = v[0];
}

fn main() {}
