// Refused: a const (non-type) generic parameter on a kernel.
use gsync::prelude::*;

#[grid_phases]
fn k<const N: usize>(a: &mut [u32]) {
    a[0] = 1;
}

fn main() {}
