use gsync::prelude::*;

#[grid_phases]
fn k(a: &[bf16], out: &mut [u32]) {
    for i in grid_stride(0..a.len()) {
        out[i] = a[i] as u32;
    }
}

fn main() {}
