use gsync::prelude::*;

#[grid_phases]
fn k(out: &mut [u32]) {
    wait_async_copies(1);
    out[0] = 1;
}

fn main() {}
