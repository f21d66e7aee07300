use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32]) -> u32 {
    a[0]
}

fn main() {}
