use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32]) {
    if thread_idx() == 0 {
        a[0] = 1;
        grid_sync();
    }
}

fn main() {}
