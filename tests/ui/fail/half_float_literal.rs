use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [f16]) {
    for i in grid_stride(0..a.len()) {
        a[i] = a[i] * 2.0;
    }
    let _x: bf16 = 1.5;
}

fn main() {}
