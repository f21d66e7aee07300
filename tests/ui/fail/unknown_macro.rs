use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32]) {
    println!("hello from the GPU");
}

fn main() {}
