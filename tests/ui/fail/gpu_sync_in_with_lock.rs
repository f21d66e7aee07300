use gsync::prelude::*;

#[grid_phases]
fn k(locks: &mut [u32], a: &mut [u32]) {
    locks.with_lock(0, || {
        a[0] += 1;
        gpu_sync();
    });
}

fn main() {}
