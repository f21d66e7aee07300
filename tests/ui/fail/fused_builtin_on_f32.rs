// Refused: the fused max and min builtins have no float form.
use gsync::prelude::*;

#[grid_phases]
fn k(a: &[f32], out: &mut [f32]) {
    out[0] = max3(a[0], a[1], a[2]);
}

fn main() {}
