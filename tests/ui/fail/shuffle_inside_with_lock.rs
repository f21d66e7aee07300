use gsync::prelude::*;

#[grid_phases]
fn k(locks: &mut [u32], data: &mut [u32]) {
    locks.with_lock(0, || {
        data[0] = shfl_xor(data[1], 1);
    });
}

fn main() {}
