use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32]) {
    let i = global_id();
    let v = a[i];
    let y = if thread_idx() < 5 { shfl(v, 31) } else { 0 };
    a[i] = y;
}

fn main() {}
