use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [f32]) {
    a.atomic_cas(0, 1.0, 2.0);
}

fn main() {}
