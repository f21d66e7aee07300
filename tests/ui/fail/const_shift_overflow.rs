// Refused: a shift in a `const` by at least the width of its type.
use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32]) {
    const BIG: u32 = 1 << 32;
    a[0] = BIG;
}

fn main() {}
