use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32]) {
    a[0] = thread_idx_y(1);
}

fn main() {}
