use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32]) {
    a[0] = ballot(a[1]);
}

fn main() {}
