use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32]) {
    let i = global_id();
    let mut v = a[i];
    // Threads whose condition failed have left the loop when the others test it again.
    while shfl_down(v, 1) > 3 {
        v = v / 2;
    }
    a[i] = v;
}

fn main() {}
