use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32]) {
    a[0] = helper(3u32);
}

fn main() {}
