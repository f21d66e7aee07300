// Refused: `assert_eq!` with one value instead of two.
use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32]) {
    assert_eq!(a[0]);
}

fn main() {}
