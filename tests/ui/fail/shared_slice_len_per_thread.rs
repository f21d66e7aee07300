use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32]) {
    let mut s = shared_slice::<u32>(thread_idx() as usize + 1);
    s[0] = 1;
    a[0] = s[0];
}

fn main() {}
