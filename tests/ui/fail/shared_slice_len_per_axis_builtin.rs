// Refused: a per-axis builtin (`block_dim_x()`) in a shared slice's length.
use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32]) {
    let mut s = shared_slice::<u32>(block_dim_x() as usize);
    s[0] = 1;
    a[0] = s[0];
}

fn main() {}
