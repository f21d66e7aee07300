use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32]) {
    a[0] = missing;
}

fn main() {}
