use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32]) {
    if thread_idx() < 16 {
        sync_block();
    }
}

fn main() {}
