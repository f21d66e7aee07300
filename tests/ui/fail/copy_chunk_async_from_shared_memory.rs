use gsync::prelude::*;

#[grid_phases]
fn k(out: &mut [u32]) {
    let mut a = shared_array::<u32, 64>();
    let mut b = shared_array::<u32, 64>();
    b[0] = 1;
    a.copy_chunk_async::<4>(0, b, 0);
    wait_async_copies();
    out[0] = a[0];
}

fn main() {}
