use gsync::prelude::*;

#[grid_phases]
fn k(a: &mut [u32], n: u32) {
    a[0] = 1 + match n {
        0 => {
            let x = 3;
            x
        }
        _ => 2,
    };
}

fn main() {}
