use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32]) {
    for i in (0..a.len()).step_by(0) {
        a[i] = 1;
    }
}

fn main() {}
