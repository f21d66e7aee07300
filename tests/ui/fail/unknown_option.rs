use gsync::prelude::*;

#[grid_phases(blocks = 4)]
fn k(a: &mut [u32]) {
    a[0] = 1;
}

fn main() {}
