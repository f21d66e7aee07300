use gsync::prelude::*;

#[grid_phases]
fn k(mut a: &mut [u32], mut x: u32) {
    std::mem::swap(&mut a, &mut x);
}

fn main() {}
