use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32], n: u32) {
    const N: u32 = n * 2;
    a[0] = N;
}

fn main() {}
