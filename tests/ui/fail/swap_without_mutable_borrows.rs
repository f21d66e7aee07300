use gsync::prelude::*;

#[grid_phases]
fn k(mut a: &mut [f32], mut b: &mut [f32]) {
    std::mem::swap(a, b);
}

fn main() {}
