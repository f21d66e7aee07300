use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32]) {
    let mut tile = shared_array::<u32, { BLOCK_SIZE / 2048 }>();
    tile[0] = 1;
    a[0] = tile[0];
}

fn main() {}
