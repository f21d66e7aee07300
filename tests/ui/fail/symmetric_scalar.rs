use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32], #[symmetric] n: u32) {
    a[0] = n;
}

fn main() {}
