#[gsync::kernels]
fn k(a: &mut [u32]) {
    a[0] = 1;
}

fn main() {}
