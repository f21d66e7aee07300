// Refused: a method the host does not evaluate (`pow`) in a shared slice's length.
use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32], n: usize) {
    let mut s = shared_slice::<u32>(n.pow(2));
    s[0] = 1;
    a[0] = s[0];
}

fn main() {}
