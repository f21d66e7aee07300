use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32]) {
    let x = 1u32;
    x = 2;
    a[0] = x;
}

fn main() {}
