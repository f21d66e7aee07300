#[gsync::kernels]
mod m {
    #[device]
    fn ready(flags: &[u32]) -> bool {
        sync_block();
        flags.load_acquire(0) != 0
    }

    #[grid_phases]
    pub fn k(flags: &mut [u32]) {
        wait_until(|| ready(flags));
    }
}

fn main() {}
