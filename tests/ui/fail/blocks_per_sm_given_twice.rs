use gsync::prelude::*;

#[grid_phases(blocks_per_sm = 2, threads = 128, blocks_per_sm = 4)]
fn k(a: &mut [u32]) {
    a[0] = 1;
}

fn main() {}
