use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32]) {
    debug_assert!(a[0]);
}

fn main() {}
