use gsync::prelude::*;

#[grid_phases]
fn k(out: &mut [u32]) {
    let mut x = 1u32;
    let mut y = 2u64;
    std::mem::swap(&mut x, &mut y);
    out[0] = x;
}

fn main() {}
