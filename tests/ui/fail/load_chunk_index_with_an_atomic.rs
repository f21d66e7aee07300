use gsync::prelude::*;

#[grid_phases]
fn k(keys: &[u32], counts: &mut [u32], out: &mut [u32]) {
    let v = keys.load_chunk::<4>(counts.atomic_add(0, 1) as usize);
    out[0] = v[0];
}

fn main() {}
