use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32], n: i32) {
    let mut s = shared_slice::<u32>(n);
    s[0] = 1;
}

fn main() {}
