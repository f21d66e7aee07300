use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32]) {
    let done = gpu_sync();
    a[0] = 1;
}

fn main() {}
