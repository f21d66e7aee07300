// Refused: bounds in a `where` clause instead of inline.
use gsync::prelude::*;

#[grid_phases]
fn k<T: Num>(a: &mut [T])
where
    T: Copy,
{
    a[0] = a[1];
}

fn main() {}
