use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32]) {
    let i = global_id();
    if i < 100 {
        a[i] = shfl_down(a[i], 1);
    }
}

fn main() {}
