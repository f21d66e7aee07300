use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u8]) {
    a[0] = 256;
}

fn main() {}
