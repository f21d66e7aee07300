use gsync::prelude::*;

#[grid_phases]
fn k(flags: &mut [u32]) {
    wait_until(flags.load_acquire(0) != 0);
}

fn main() {}
