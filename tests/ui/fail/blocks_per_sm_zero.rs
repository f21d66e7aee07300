use gsync::prelude::*;

#[grid_phases(blocks_per_sm = 0)]
fn k(a: &mut [u32]) {
    a[0] = 1;
}

fn main() {}
