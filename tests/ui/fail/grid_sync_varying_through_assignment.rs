use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32]) {
    let mut rounds = 4u32;
    if lane_id() == 0 {
        rounds = 5;
    }
    for _ in 0..rounds {
        grid_sync();
    }
}

fn main() {}
