use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u8]) {
    let x = a[0];
    let y = match x {
        0..=300 => 1,
    };
    a[1] = y;
}

fn main() {}
