use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u64]) {
    let mut scratch = [0u64; 100000];
    let i = global_id();
    scratch[i % 100000] = 1;
    a[i] = scratch[0];
}

fn main() {}
