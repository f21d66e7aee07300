#[gsync::kernels]
mod m {
    #[device]
    fn step() {
        grid_sync();
    }

    #[grid_phases]
    pub fn k(a: &mut [u32]) {
        match thread_idx() {
            0 => step(),
            _ => a[0] = 1,
        }
    }
}

fn main() {}
