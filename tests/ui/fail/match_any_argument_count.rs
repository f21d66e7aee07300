// Refused: `match_any` with two arguments.
use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32]) {
    a[0] = match_any(a[1], a[2]);
}

fn main() {}
