use gsync::prelude::*;

#[grid_phases]
fn k(a: &[f32], out: &mut [f16]) {
    for i in grid_stride(0..a.len()) {
        out[i] = a[i] as f16;
    }
}

fn main() {}
