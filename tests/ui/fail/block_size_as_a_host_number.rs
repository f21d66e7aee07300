use gsync::prelude::*;

/// The host has no block size: the placeholder is no number.
const THREADS: usize = BLOCK_SIZE * 2;

fn main() {}
