// Refused: an `assert!` message that is not a string literal.
use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32]) {
    assert!(a[0] > 0, a[1]);
}

fn main() {}
