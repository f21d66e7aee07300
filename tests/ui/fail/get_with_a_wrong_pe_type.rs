use gsync::prelude::*;

#[grid_phases]
fn k(#[symmetric] a: &mut [u32], out: &mut [u32]) {
    out[0] = a.get(1u64, 0);
}

fn main() {}
