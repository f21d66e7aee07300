use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32]) {
    let mut x = 0u32;
    if lane_id() == 0 {
        x = a[0];
    }
    if x > 0 {
        sync_block();
    }
}

fn main() {}
