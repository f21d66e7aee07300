use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32]) {
    let f = |x: u32| x + 1;
    a[0] = 1;
}

fn main() {}
