// Refused: a fused builtin whose arguments' type nothing pins down.
use gsync::prelude::*;

#[grid_phases]
fn k(out: &mut [i32]) {
    let m = add_min(1, 2, 3);
    out[0] = 0;
}

fn main() {}
