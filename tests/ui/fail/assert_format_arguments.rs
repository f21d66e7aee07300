use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32]) {
    assert!(a[0] > 0, "a[0] is {}", a[0]);
}

fn main() {}
