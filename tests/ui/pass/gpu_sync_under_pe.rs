//! `gpu_sync()` under control flow on `pe()`: each PE waits for its own blocks as often as it
//! calls it, and the kernel splits, its host code reading `pe()`.
use gsync::prelude::*;

#[grid_phases]
fn k(#[symmetric] a: &mut [u32], rounds: u32) {
    let extra = pe() % 2;
    for _ in 0..rounds + extra {
        for i in grid_stride(0..a.len()) {
            a[i] += 1;
        }
        gpu_sync();
    }
    if pe() == 0 {
        gpu_sync();
    }
    grid_sync();
}

fn main() {
    let gpu = Gpu::emulator();
    let mut a = gpu.zeros::<u32>(100).unwrap();
    k::launch(&gpu, &mut a, 2).unwrap();
    k::launch_with(&gpu, &Launch::new().barrier(Barrier::MultiLaunch), &mut a, 2).unwrap();
    assert_eq!(gpu.download(&a).unwrap(), vec![4; 100]);
}
