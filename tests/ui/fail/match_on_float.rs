use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [f32]) {
    a[0] = match a[1] {
        _ => 1.0,
    };
}

fn main() {}
