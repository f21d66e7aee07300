// Refused: a shared slice's `.len()` in another shared slice's length.
use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32], n: usize) {
    let mut s = shared_slice::<u32>(n);
    let mut t = shared_slice::<u32>(s.len());
    s[0] = 1;
    t[0] = 2;
    a[0] = s[0] + t[0];
}

fn main() {}
