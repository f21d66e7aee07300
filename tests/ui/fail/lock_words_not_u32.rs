use gsync::prelude::*;

#[grid_phases]
fn k(locks: &mut [u64], data: &mut [u32]) {
    locks.with_lock(0, || {
        data[0] += 1;
    });
}

fn main() {}
