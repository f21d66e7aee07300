// Refused: the fused max and min builtins are 32-bit only.
use gsync::prelude::*;

#[grid_phases]
fn k(a: &[i64], out: &mut [i64]) {
    out[0] = add_max(a[0], a[1], a[2]);
}

fn main() {}
