use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [f32], mut b: &mut [f32]) {
    std::mem::swap(&mut a, &mut b);
}

fn main() {}
