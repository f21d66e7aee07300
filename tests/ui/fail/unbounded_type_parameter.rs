use gsync::prelude::*;

#[grid_phases]
fn k<T>(a: &mut [T]) {
}

fn main() {}
