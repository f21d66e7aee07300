use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32]) {
    let r = &a[0];
}

fn main() {}
