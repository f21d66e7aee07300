// A device function called inside a critical section may return early: its `return` leaves
// the function, not the lock.
use gsync::prelude::*;

#[gsync::kernels]
mod counters {
    #[device]
    fn capped_increment(x: u32, cap: u32) -> u32 {
        if x >= cap {
            return x;
        }
        x + 1
    }

    #[grid_phases]
    pub fn bump(locks: &mut [u32], counter: &mut [u32], cap: u32) {
        locks.with_lock(0, || {
            counter[0] = capped_increment(counter[0], cap);
        });
    }
}

fn main() {
    let gpu = Gpu::emulator();
    let mut locks = gpu.zeros::<u32>(1).unwrap();
    let mut counter = gpu.zeros::<u32>(1).unwrap();
    let launch = Launch::new().blocks(4).threads(8);
    counters::bump::launch_with(&gpu, &launch, &mut locks, &mut counter, 20).unwrap();
    assert_eq!(gpu.download(&counter).unwrap(), [20]);
}
