// Refused: a `match` pattern that is no literal, `const`, range, `|` or `_` (a tuple).
use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32]) {
    a[0] = match a[1] {
        (0, 1) => 1,
        _ => 2,
    };
}

fn main() {}
