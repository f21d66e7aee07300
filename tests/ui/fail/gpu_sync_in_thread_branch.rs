use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32]) {
    let i = global_id() as usize;
    if i < a.len() {
        a[i] = 1;
        gpu_sync();
    }
}

fn main() {}
