use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32]) {
    loop {
        if a[global_id()] == 0 {
            break;
        }
        grid_sync();
    }
}

fn main() {}
