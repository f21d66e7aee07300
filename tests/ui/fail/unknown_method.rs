use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32]) {
    let x = a[0].frobnicate();
}

fn main() {}
