use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [i32]) {
    const Q: i32 = i32::MIN % -1;
    a[0] = Q;
}

fn main() {}
