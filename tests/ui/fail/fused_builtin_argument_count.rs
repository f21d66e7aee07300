// Refused: `max3` with two arguments.
use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [i32]) {
    a[0] = max3(a[1], a[2]);
}

fn main() {}
