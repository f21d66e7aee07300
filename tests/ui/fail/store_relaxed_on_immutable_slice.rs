use gsync::prelude::*;

#[grid_phases]
fn k(words: &[u64]) {
    words.store_relaxed(0, 1);
}

fn main() {}
