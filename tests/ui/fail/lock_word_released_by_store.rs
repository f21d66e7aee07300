use gsync::prelude::*;

#[grid_phases]
fn k(locks: &mut [u32], counter: &mut [u32]) {
    locks.with_lock(0, || {
        counter[0] += 1;
    });
    if thread_idx() == 1 {
        locks.store_release(0, 0);
    }
}

fn main() {}
