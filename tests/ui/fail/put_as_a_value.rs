use gsync::prelude::*;

#[grid_phases]
fn k(#[symmetric] a: &mut [u32]) {
    let x = a.put(1, 0, 7);
}

fn main() {}
