use gsync::prelude::*;

#[grid_phases(threads = 64, threads = 128)]
fn k(a: &mut [u32]) {
    a[0] = 1;
}

fn main() {}
