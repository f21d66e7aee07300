use gsync::prelude::*;

#[grid_phases(threads = 1024, blocks_per_sm = 3)]
fn k(a: &mut [u32]) {
    a[0] = 1;
}

fn main() {}
