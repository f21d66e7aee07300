use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32], scale: f32) {
    let mut s = shared_slice::<u32>((scale * 100.0) as usize);
    s[0] = 1;
}

fn main() {}
