use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32]) {
    assert!(a.atomic_add(0, 1) < 10);
}

fn main() {}
