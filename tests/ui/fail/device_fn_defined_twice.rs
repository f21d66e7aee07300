// Refused: two device functions of the same name in one module.
#[gsync::kernels]
mod m {
    #[device]
    fn twice(x: u32) -> u32 {
        x * 2
    }

    #[device]
    fn twice(x: u32) -> u32 {
        x + x
    }

    #[grid_phases]
    fn k(a: &mut [u32]) {
        a[0] = twice(a[1]);
    }
}

fn main() {}
