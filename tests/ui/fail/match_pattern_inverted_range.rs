use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32]) {
    let x = a[0];
    match x {
        10..=1 => a[1] = 1,
        _ => {}
    }
}

fn main() {}
