use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [bf16], b: &[f16]) {
    a[1] = a[1] & a[2];
    let _c = !b[0];
}

fn main() {}
