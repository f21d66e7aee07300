use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [f64]) {
    let small = shared_array::<f32, 1024>();
    let tile = shared_array::<f64, 102400>();
    let i = global_id();
    a[i] = tile[i % 256] + small[0] as f64;
}

fn main() {}
