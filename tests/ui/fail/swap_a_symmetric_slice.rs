use gsync::prelude::*;

#[grid_phases]
fn k(#[symmetric] mut a: &mut [u32], mut b: &mut [u32]) {
    std::mem::swap(&mut a, &mut b);
    grid_sync();
    a[0] = b[0];
}

fn main() {}
