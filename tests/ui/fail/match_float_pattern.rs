// Refused: a float literal as a `match` pattern.
use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32]) {
    a[0] = match a[1] {
        1.5 => 1,
        _ => 2,
    };
}

fn main() {}
