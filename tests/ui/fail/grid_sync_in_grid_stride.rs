use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32]) {
    for i in grid_stride(0..a.len()) {
        a[i] += 1;
        grid_sync();
    }
}

fn main() {}
