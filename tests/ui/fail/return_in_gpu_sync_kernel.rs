use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32]) {
    if global_id() as usize >= a.len() {
        return;
    }
    a[global_id() as usize] = 1;
    gpu_sync();
}

fn main() {}
