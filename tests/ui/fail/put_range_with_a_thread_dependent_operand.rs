use gsync::prelude::*;

#[grid_phases]
fn k(#[symmetric] a: &mut [u32], b: &[u32]) {
    let i = global_id() as usize;
    a.put_range(1, i, &b[0..4]);
}

fn main() {}
