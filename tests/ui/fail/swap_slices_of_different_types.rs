use gsync::prelude::*;

#[grid_phases]
fn k(mut a: &mut [f32], mut b: &[f32]) {
    std::mem::swap(&mut a, &mut b);
}

fn main() {}
