use gsync::prelude::*;

#[grid_phases]
fn k(locks: &mut [u32], data: &mut [u32]) {
    locks.with_lock(0, || {
        if data[0] > 3 {
            return;
        }
        data[0] += 1;
    });
}

fn main() {}
