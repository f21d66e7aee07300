use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32]) {
    if warp_id() == 0 {
        gpu_sync();
    }
    a[0] = 1;
}

fn main() {}
