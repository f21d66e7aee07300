use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32]) {
    a[0] = 1 + match a[1] {
        0 => 1,
        _ => 2,
    };
}

fn main() {}
