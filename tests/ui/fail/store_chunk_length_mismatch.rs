use gsync::prelude::*;

#[grid_phases]
fn k(out: &mut [u32]) {
    let v = [1u32, 2, 3, 4];
    out.store_chunk::<2>(0, v);
}

fn main() {}
