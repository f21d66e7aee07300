use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [f32]) {
    a[1.5] = 0.0;
}

fn main() {}
