use gsync::prelude::*;

#[grid_phases]
fn k(flags: &mut [bool]) {
}

fn main() {}
