use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32], b: &mut [u32]) {
    std::mem::swap(&mut a[0], &mut b[0]);
}

fn main() {}
