use gsync::prelude::*;

#[grid_phases]
fn k(out: &mut [u32]) {
    let x = wait_async_copies();
    out[0] = 1;
}

fn main() {}
