use gsync::prelude::*;

#[grid_phases]
fn k(#[symmetric] a: &mut [u32]) {
    let mine = [1u32, 2, 3, 4];
    a.put_range(1, 0, &mine[..]);
}

fn main() {}
