// Refused: a warp shuffle in a shared slice's length.
use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32], n: u32) {
    let mut s = shared_slice::<u32>(shfl(n, 0));
    s[0] = 1;
    a[0] = s[0];
}

fn main() {}
