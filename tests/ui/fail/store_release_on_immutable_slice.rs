use gsync::prelude::*;

#[grid_phases]
fn k(flags: &[u32]) {
    flags.store_release(0, 1);
}

fn main() {}
