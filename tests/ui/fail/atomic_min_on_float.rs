use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [f32]) {
    a.atomic_min(0, 1.0);
}

fn main() {}
