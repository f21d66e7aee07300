use gsync::prelude::*;

#[grid_phases]
fn k(#[symmetric] a: &mut [u32]) {
    if pe() == 0 {
        grid_sync();
    }
    a[0] = 1;
}

fn main() {}
