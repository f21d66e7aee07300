use gsync::prelude::*;

#[grid_phases]
fn k(#[symmetric] a: &mut [u32], b: &[u32]) {
    a.put_range(1, 0, &b[0..=3]);
}

fn main() {}
