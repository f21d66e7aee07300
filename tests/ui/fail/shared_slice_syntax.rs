use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32], n: u32) {
    let mut b = shared_slice::<bool>(4);
    let mut c = shared_slice::<u32, 4>(4);
    let mut d = shared_slice::<u32>();
    a[0] = shared_slice::<u32>(4);
}

fn main() {}
