use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32]) {
    if lane_id() < 16 {
        a[0] = ballot(a[1] > 0);
    }
}

fn main() {}
