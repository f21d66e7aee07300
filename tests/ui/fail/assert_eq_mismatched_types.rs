use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32], b: &[i32]) {
    assert_eq!(a[0], b[0]);
}

fn main() {}
