use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32]) {
    let t = [0u32; 4 / 0];
    a[0] = t[0];
}

fn main() {}
