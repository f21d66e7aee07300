use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [bf16], b: &[bf16]) {
    a.atomic_cas(0, bf16::ZERO, bf16::ONE);
    a[2] = bf16::from_f32(1.0, 2.0);
    let _e = b[0].exp();
}

fn main() {}
