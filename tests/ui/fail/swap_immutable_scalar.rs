use gsync::prelude::*;

#[grid_phases]
fn k(out: &mut [u32]) {
    let x = 1u32;
    let mut y = 2u32;
    std::mem::swap(&mut x, &mut y);
    out[0] = y;
}

fn main() {}
