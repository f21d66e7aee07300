use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32]) {
    let mut s = shared_slice::<u32>(a.len() / grid_dim() as usize);
    s[0] = 1;
}

fn main() {}
