use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32]) {
    if a.len() == 0 {
        return;
    }
    grid_sync();
}

fn main() {}
