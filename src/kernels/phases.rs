//! A kernel of nearly empty phases: what one phase boundary costs.

use crate::grid_phases;

/// `phases` phases that each do one store, separated by `grid_sync()`: the
/// time per phase is the cost of a barrier (or, split, of a kernel launch).
#[grid_phases]
pub fn empty_phases(marker: &mut [u32], phases: u32) {
    for p in 0..phases {
        if global_id() == 0 {
            marker[0] = p;
        }
        grid_sync();
    }
}
