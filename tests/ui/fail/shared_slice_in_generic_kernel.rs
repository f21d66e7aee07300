use gsync::prelude::*;

#[grid_phases]
fn k<T: Num>(a: &mut [T], n: u32) {
    let mut s = shared_slice::<T>(n as usize);
    s[0] = a[0];
    a[0] = s[0];
}

fn main() {}
