use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32]) {
    let _ = a.atomic_add(0, 1, Ordering::Consume);
}

fn main() {}
