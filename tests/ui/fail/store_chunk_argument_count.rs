use gsync::prelude::*;

#[grid_phases]
fn k(out: &mut [u32]) {
    out.store_chunk(0);
}

fn main() {}
