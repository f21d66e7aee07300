#[gsync::kernels]
mod m {
    #[device]
    fn clear(words: &mut [u32]) {
        words[0] = 0;
    }

    #[grid_phases]
    pub fn k(locks: &mut [u32], counter: &mut [u32]) {
        locks.with_lock(0, || {
            counter[0] += 1;
        });
        clear(locks);
    }
}

fn main() {}
