use gsync::prelude::*;

#[grid_phases]
fn k(out: &mut [u32]) {
    let v = [0.5f32; 4];
    out.store_chunk(0, v);
}

fn main() {}
