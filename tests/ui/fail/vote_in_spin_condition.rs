use gsync::prelude::*;

#[grid_phases]
fn k(flags: &mut [u32]) {
    wait_until(|| any(flags.load_acquire(0) == 1));
}

fn main() {}
