use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32]) {
    let p = Point { x: 1, y: 2 };
}

fn main() {}
