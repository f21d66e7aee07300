use gsync::prelude::*;

#[grid_phases]
fn k(out: &mut [u32]) {
    out.store_chunk(0, [1u32, 2, 3, 4]);
}

fn main() {}
