//! A kernel of nearly empty phases: what one phase boundary costs.

use crate::grid_phases;

/// `phases` phases that each do one store, separated by `grid_sync()`: the
/// time per phase is the cost of a barrier (or, split, of a kernel launch).
///
/// ```
/// use gsync::kernels::empty_phases;
/// use gsync::{Barrier, Gpu, Launch};
///
/// # fn main() -> gsync::Result<()> {
/// let gpu = Gpu::emulator(); // or Gpu::new(0)
/// let mut marker = gpu.zeros::<u32>(1)?;
/// for barrier in [Barrier::Auto, Barrier::MultiLaunch] {
///     let report = empty_phases::launch_with(&gpu, &Launch::new().barrier(barrier), &mut marker, 100)?;
///     println!("{barrier}: {:?} per phase", report.gpu_time / 100);
/// }
/// assert_eq!(gpu.download(&marker)?, [99]);
/// # Ok(())
/// # }
/// ```
#[grid_phases]
pub fn empty_phases(marker: &mut [u32], phases: u32) {
    for p in 0..phases {
        if global_id() == 0 {
            marker[0] = p;
        }
        grid_sync();
    }
}
