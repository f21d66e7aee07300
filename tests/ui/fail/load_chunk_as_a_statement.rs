use gsync::prelude::*;

#[grid_phases]
fn k(keys: &[u32]) {
    keys.load_chunk::<4>(0);
}

fn main() {}
