use gsync::prelude::*;

#[grid_phases]
fn k(out: &mut [u32]) {
    let held = [0u32; 4];
    let v = held.load_chunk::<4>(0);
    out[0] = v[0];
}

fn main() {}
