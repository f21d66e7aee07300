use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [f32]) {
    for r in 0..4u32 {
        let mut tile = shared_array::<f32, 64>();
        tile[0] = 1.0;
    }
}

fn main() {}
