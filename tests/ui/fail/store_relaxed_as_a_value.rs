use gsync::prelude::*;

#[grid_phases]
fn k(words: &mut [u64]) {
    let x = words.store_relaxed(0, 1);
}

fn main() {}
