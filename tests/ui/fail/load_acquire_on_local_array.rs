use gsync::prelude::*;

#[grid_phases]
fn k(out: &mut [u32]) {
    let t = [0u32; 4];
    out[0] = t.load_acquire(0);
}

fn main() {}
