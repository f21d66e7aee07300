use gsync::prelude::*;

#[grid_phases]
fn k(#[symmetric(all)] a: &mut [u32]) {
    a[0] = 1;
}

fn main() {}
