use gsync::prelude::*;

#[grid_phases]
fn k(locks: &mut [u32], data: &mut [u32]) {
    locks.with_lock(0, |i| {
        data[i] += 1;
    });
}

fn main() {}
