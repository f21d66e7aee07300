use gsync::prelude::*;

#[grid_phases]
fn k(#[symmetric] flags: &mut [u32], a: &mut [u32]) {
    // Each PE reads its own part: PEs may disagree on the branch.
    if flags[0] > 0 {
        grid_sync();
    }
    a[0] = 1;
}

fn main() {}
