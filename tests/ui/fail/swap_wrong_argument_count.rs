use gsync::prelude::*;

#[grid_phases]
fn k(mut a: &mut [u32]) {
    std::mem::swap(&mut a);
}

fn main() {}
