use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32]) {
    let i = global_id();
    let v = a[i];
    if thread_idx() < 5 && shfl_xor(v, 1) > 0 {
        a[i] = 1;
    }
}

fn main() {}
