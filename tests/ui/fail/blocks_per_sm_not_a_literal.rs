use gsync::prelude::*;

const BLOCKS: u32 = 2;

#[grid_phases(blocks_per_sm = BLOCKS)]
fn k(a: &mut [u32]) {
    a[0] = 1;
}

fn main() {}
