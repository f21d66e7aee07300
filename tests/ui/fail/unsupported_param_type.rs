use gsync::prelude::*;

#[grid_phases]
fn k(a: Vec<f32>) {
}

fn main() {}
