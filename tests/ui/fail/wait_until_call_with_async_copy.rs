#[gsync::kernels]
mod m {
    #[device]
    fn ready(stage: &mut [u32], flags: &[u32]) -> bool {
        stage.copy_chunk_async::<4>(0, flags, 0);
        flags.load_acquire(0) != 0
    }

    #[grid_phases]
    pub fn k(flags: &mut [u32]) {
        let mut stage = shared_array::<u32, 8>();
        wait_until(|| ready(&mut stage, flags));
        wait_async_copies();
    }
}

fn main() {}
