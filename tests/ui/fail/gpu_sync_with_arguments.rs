use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32]) {
    a[0] = 1;
    gpu_sync(1);
}

fn main() {}
