use gsync::prelude::*;

#[grid_phases]
async fn k(a: &mut [u32]) {
}

fn main() {}
