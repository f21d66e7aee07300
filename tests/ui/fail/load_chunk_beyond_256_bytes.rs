use gsync::prelude::*;

#[grid_phases]
fn k(keys: &[u64], out: &mut [u64]) {
    let v = keys.load_chunk::<64>(0);
    out[0] = v[0];
}

fn main() {}
