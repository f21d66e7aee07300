// Refused: `store_release` with only an index.
use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32]) {
    a.store_release(0);
}

fn main() {}
