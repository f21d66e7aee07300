use gsync::prelude::*;

#[grid_phases]
fn k(flags: &mut [u64], out: &mut [u64]) {
    out[0] = flags.load_signal(0);
}

fn main() {}
