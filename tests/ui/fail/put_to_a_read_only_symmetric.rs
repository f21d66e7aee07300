use gsync::prelude::*;

#[grid_phases]
fn k(#[symmetric] a: &[u32], out: &mut [u32]) {
    a.put(1, 0, 7);
    out[0] = a.get(0, 0);
}

fn main() {}
