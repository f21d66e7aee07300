use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32]) {
    a[0] = match a[1] {
        x if x > 3 => 1,
        _ => 2,
    };
}

fn main() {}
