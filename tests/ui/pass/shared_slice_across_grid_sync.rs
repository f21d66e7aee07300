use gsync::prelude::*;

/// Shared slices keep their contents across `grid_sync()` in the fused kernel; MultiLaunch,
/// whose launches start with fresh shared memory, refuses the kernel, as for shared arrays.
#[grid_phases]
fn k(a: &mut [u32], n: u32) {
    let mut s = shared_slice::<u32>(n as usize);
    if thread_idx() == 0 {
        s[0] = block_idx() + 1;
    }
    grid_sync();
    if thread_idx() == 0 {
        a[block_idx() as usize] = s[0];
    }
}

fn main() {
    let gpu = Gpu::emulator();
    let mut a = gpu.zeros::<u32>(4).unwrap();
    k::launch_with(&gpu, &Launch::new().blocks(4).threads(32), &mut a, 1).unwrap();
    assert_eq!(gpu.download(&a).unwrap(), [1, 2, 3, 4]);
    let split = Launch::new().blocks(4).threads(32).barrier(Barrier::MultiLaunch);
    let error = k::launch_with(&gpu, &split, &mut a, 1).expect_err("not splittable");
    assert!(matches!(error, Error::CannotSplit { .. }), "{error}");
    assert!(error.to_string().contains("shared slice `s`"), "{error}");
}
