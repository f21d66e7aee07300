use gsync::prelude::*;

#[grid_phases]
fn k(a: &[f64], out: &mut [f16]) {
    for i in grid_stride(0..a.len()) {
        out[i] = f16::from_f64(a[i]);
    }
}

fn main() {}
