#[gsync::device]
fn twice(x: u32) -> u32 {
    x * 2
}

fn main() {}
