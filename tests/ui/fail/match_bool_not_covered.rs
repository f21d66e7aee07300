use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32], flag: bool) {
    a[0] = match flag {
        true => 1,
    };
}

fn main() {}
