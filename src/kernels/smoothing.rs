//! Repeated 3-point smoothing: the model problem of a grid barrier, since
//! every round reads the neighbours that other blocks wrote in the round before.

use crate::grid_phases;

/// `rounds` steps of a 3-point smoothing, ping-ponging between `a` and `b`.
///
/// After an even number of rounds the result is in `a`, after an odd number
/// in `b`. The end points of both arrays are never written.
///
/// ```
/// use gsync::kernels::{smooth, smooth_reference};
/// use gsync::{Gpu, Launch};
///
/// # fn main() -> gsync::Result<()> {
/// let gpu = Gpu::emulator(); // or Gpu::new(0)
/// let input: Vec<f32> = (0..1000).map(|i| (i % 7) as f32).collect();
/// let (mut a, mut b) = (gpu.upload(&input)?, gpu.zeros::<f32>(input.len())?);
/// let report = smooth::launch_with(&gpu, &Launch::new().blocks(4).threads(64), &mut a, &mut b, 10)?;
/// assert_eq!(report.blocks, 4);
/// assert_eq!(gpu.download(&a)?, smooth_reference(&input, 10));
/// # Ok(())
/// # }
/// ```
#[grid_phases]
pub fn smooth(a: &mut [f32], b: &mut [f32], rounds: u32) {
    let n = a.len() as u32;
    for r in 0..rounds {
        for i in grid_stride(1..n - 1) {
            if r % 2 == 0 {
                b[i] = (a[i - 1] + a[i] + a[i + 1]) / 3.0;
            } else {
                a[i] = (b[i - 1] + b[i] + b[i + 1]) / 3.0;
            }
        }
        grid_sync(); // every block sees the whole round before the next one starts
    }
}

/// The same computation on the CPU, for verification: returns the array
/// that holds the result (`a` after an even number of rounds, else `b`).
pub fn smooth_reference(input: &[f32], rounds: u32) -> Vec<f32> {
    let mut a = input.to_vec();
    let mut b = vec![0.0f32; input.len()];
    let n = input.len();
    for r in 0..rounds {
        let (src, dst) = if r % 2 == 0 { (&a, &mut b) } else { (&b, &mut a) };
        for i in 1..n.saturating_sub(1) {
            dst[i] = (src[i - 1] + src[i] + src[i + 1]) / 3.0;
        }
    }
    if rounds.is_multiple_of(2) {
        a
    } else {
        b
    }
}
