use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32]) {
    a[0] = match a[1] {
        0 => 1,
        other => other,
    };
}

fn main() {}
