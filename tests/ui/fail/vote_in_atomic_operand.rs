use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32], total: &mut [u32]) {
    let i = global_id();
    total.atomic_add(0, ballot(a[i] > 0));
}

fn main() {}
