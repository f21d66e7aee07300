use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32]) {
    let warp = thread_idx() / 32;
    if warp == 0 {
        a[0] = shfl(a[1], 0); // fine: the whole warp takes the branch
        sync_block(); // but not the whole block
    }
}

fn main() {}
