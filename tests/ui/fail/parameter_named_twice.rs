use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32], a: u32) {}

fn main() {}
