use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32]) {
    assert_eq!(a[0], 1, "expected {a}");
}

fn main() {}
