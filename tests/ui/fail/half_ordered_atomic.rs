use gsync::prelude::*;

#[grid_phases]
fn k(sum: &mut [f16]) {
    sum.atomic_add(0, f16::ONE, Ordering::AcqRel);
}

fn main() {}
