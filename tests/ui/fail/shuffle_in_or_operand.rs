use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32]) {
    let i = global_id();
    let v = a[i];
    let big = lane_id() >= 16 || shfl_down(v, 1) > 7;
    a[i] = big as u32;
}

fn main() {}
