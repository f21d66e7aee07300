use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32]) {
    let x = 7;
    a[0] = x.count_ones();
}

fn main() {}
