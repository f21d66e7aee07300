use gsync::prelude::*;

#[grid_phases]
fn k(locks: &mut [u32], data: &mut [u32]) {
    locks.with_lock(0, || {
        data[0] += 1;
        sync_block();
    });
}

fn main() {}
