use gsync::prelude::*;

#[grid_phases]
fn k(mut a: &mut [f32]) {
    std::mem::swap(&mut a, &mut a);
}

fn main() {}
