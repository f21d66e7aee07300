// Refused: `with_lock` on a thread's own (local) array.
use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32]) {
    let mut locks = [0u32; 4];
    locks.with_lock(0, || {
        a[0] = 1;
    });
}

fn main() {}
