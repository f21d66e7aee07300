use gsync::prelude::*;

#[grid_phases]
fn k(#[symmetric] a: &mut [u32], b: &[u32], #[symmetric] flags: &mut [f32]) {
    a.put_range_signal(1, 0, &b[0..4], flags, 0, 1.0);
}

fn main() {}
