use gsync::prelude::*;

#[grid_phases]
fn k(a: &[f32]) {
    a[0] = 1.0;
}

fn main() {}
