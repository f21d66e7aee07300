// Refused: `load_acquire` with two arguments.
use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32]) {
    a[0] = a.load_acquire(1, 2);
}

fn main() {}
