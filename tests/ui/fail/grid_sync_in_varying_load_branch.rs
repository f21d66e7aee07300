use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32]) {
    if a[thread_idx()] > 10 {
        grid_sync();
    }
}

fn main() {}
