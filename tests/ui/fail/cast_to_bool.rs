use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32]) {
    let b = a[0] as bool;
}

fn main() {}
