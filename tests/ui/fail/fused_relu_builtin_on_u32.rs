// Refused: a `_relu` form on `u32`, which is never below 0.
use gsync::prelude::*;

#[grid_phases]
fn k(a: &[u32], out: &mut [u32]) {
    out[0] = add_max_relu(a[0], a[1], a[2]);
}

fn main() {}
