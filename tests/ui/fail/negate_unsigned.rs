use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32]) {
    a[0] = -a[1];
}

fn main() {}
