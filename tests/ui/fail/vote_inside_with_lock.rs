// Refused: a warp vote inside `with_lock`.
use gsync::prelude::*;

#[grid_phases]
fn k(locks: &mut [u32], data: &mut [u32]) {
    locks.with_lock(0, || {
        data[0] = ballot(data[1] > 0);
    });
}

fn main() {}
