use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [f32]) {
    const HALF: f32 = BLOCK_SIZE as f32 / 2.0;
    let mut tile = shared_array::<f32, HALF>();
    tile[0] = 1.0;
    a[0] = tile[0];
}

fn main() {}
