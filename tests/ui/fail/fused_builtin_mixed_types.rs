// Refused: `i32` and `u32` arguments to one fused builtin.
use gsync::prelude::*;

#[grid_phases]
fn k(a: &[i32], b: &[u32], out: &mut [i32]) {
    out[0] = min3(a[0], a[1], b[0]);
}

fn main() {}
