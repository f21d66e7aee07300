use gsync::prelude::*;

#[grid_phases]
fn k(keys: &[u32]) {
    let v = [1u32, 2, 3, 4];
    keys.store_chunk(0, v);
}

fn main() {}
