use gsync::prelude::*;

#[grid_phases]
fn k(mut a: &mut [f32], mut b: &mut [f32]) {
    if thread_idx() == 0 {
        std::mem::swap(&mut a, &mut b);
    }
    a[0] = 1.0;
}

fn main() {}
