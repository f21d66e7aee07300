use gsync::prelude::*;

#[grid_phases]
fn k(mut a: &mut [f32]) {
    let mut tile = shared_array::<f32, 32>();
    std::mem::swap(&mut a, &mut tile);
}

fn main() {}
