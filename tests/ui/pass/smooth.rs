use gsync::prelude::*;

/// `rounds` steps of a 3-point smoothing, ping-ponging between `a` and `b`.
#[grid_phases]
fn smooth(a: &mut [f32], b: &mut [f32], rounds: u32) {
    let n = a.len() as u32;
    for r in 0..rounds {
        for i in grid_stride(1..n - 1) {
            if r % 2 == 0 { b[i] = (a[i - 1] + a[i] + a[i + 1]) / 3.0; }
            else          { a[i] = (b[i - 1] + b[i] + b[i + 1]) / 3.0; }
        }
        grid_sync();
    }
}

fn main() {
    let source = smooth::cuda_source();
    assert!(source.contains("smooth("));
    assert_eq!(smooth::KERNEL.grid_syncs, 1);
    // The launch functions have the documented signatures.
    let _: fn(&Gpu, &mut DeviceBuffer<f32>, &mut DeviceBuffer<f32>, u32) -> gsync::Result<LaunchReport> = smooth::launch;
    let _: fn(&Gpu, &Launch, &mut DeviceBuffer<f32>, &mut DeviceBuffer<f32>, u32) -> gsync::Result<LaunchReport> =
        smooth::launch_with;
}
