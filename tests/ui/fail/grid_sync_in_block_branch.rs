use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32]) {
    if block_idx() == 0 {
        grid_sync();
    }
}

fn main() {}
