#[gsync::kernels]
mod m {
    #[device]
    fn step(x: u32) -> u32 {
        x + 1
    }

    #[grid_phases]
    pub fn k(a: &mut [u32]) {
        let step = 3u32;
        a[0] = step(step);
    }
}

fn main() {}
