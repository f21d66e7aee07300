use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32], mut n: u32) {
    n += 1;
    let mut s = shared_slice::<u32>(n as usize);
    s[0] = 1;
}

fn main() {}
