use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32], n: u32) {
    for r in 0..n {
        let mut s = shared_slice::<u32>(n as usize);
        s[0] = r;
    }
}

fn main() {}
