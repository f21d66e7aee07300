use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32]) {
    a.put(1, 0, 7);
}

fn main() {}
