use gsync::prelude::*;

#[grid_phases]
fn k(locks: &mut [u32], flags: &mut [u32]) {
    locks.with_lock(0, || {
        wait_until(|| flags.load_acquire(0) != 0);
    });
}

fn main() {}
