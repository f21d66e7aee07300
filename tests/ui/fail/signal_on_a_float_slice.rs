use gsync::prelude::*;

#[grid_phases]
fn k(#[symmetric] flags: &mut [f32]) {
    flags.signal(1, 0, 1.0);
}

fn main() {}
