use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32]) {
    let name = "kernel";
}

fn main() {}
