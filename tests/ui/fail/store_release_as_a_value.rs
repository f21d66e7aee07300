use gsync::prelude::*;

#[grid_phases]
fn k(flags: &mut [u32]) {
    let x = flags.store_release(0, 1);
}

fn main() {}
