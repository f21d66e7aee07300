//! [`Barrier::Auto`]: for each launch, the device barrier measured fastest for its grid.
//!
//! The choice comes from a table per GPU generation, measured with `examples/barrier_cost`
//! (docs/results.md has the runs). A row covers grids of up to `blocks_per_sm` blocks per SM;
//! the first row that covers the grid names its barrier.

use super::Barrier;

/// One row of a measured table.
struct Row {
    /// The row covers grids of at most this many blocks per SM.
    blocks_per_sm: u32,
    /// The fastest barrier there.
    barrier: Barrier,
}

/// Hopper (compute capability 9.x), measured on an H200 (docs/results.md, 2026-11-23). Up to
/// 4 blocks per SM LBS wins: one counter, one acquire-release addition per block, and a poll
/// by every block but the last. At 8, ILBS's √N group counters; beyond, Relay's per-SM
/// release.
const HOPPER: &[Row] = &[
    Row { blocks_per_sm: 4, barrier: Barrier::Lbs },
    Row { blocks_per_sm: 8, barrier: Barrier::Ilbs { groups: None } },
    Row { blocks_per_sm: u32::MAX, barrier: Barrier::Relay },
];

/// The table for a compute capability. Only Hopper has been measured; other GPUs use its
/// table too, which at worst costs speed: every barrier in it is correct on any GPU.
fn table(_compute_capability: (u32, u32)) -> &'static [Row] {
    HOPPER
}

/// Auto's barrier for a grid of `blocks` on a GPU with `sm_count` SMs.
pub(crate) fn choose(compute_capability: (u32, u32), sm_count: u32, blocks: u32) -> Barrier {
    let sm_count = sm_count.max(1);
    table(compute_capability)
        .iter()
        .find(|row| u64::from(blocks) <= u64::from(row.blocks_per_sm) * u64::from(sm_count))
        .map_or(Barrier::Relay, |row| row.barrier)
}

#[cfg(test)]
mod tests {
    use super::*;

    const H200: (u32, u32) = (9, 0);

    #[test]
    fn hopper_follows_the_measured_table() {
        let ilbs = Barrier::Ilbs { groups: None };
        for (blocks, barrier) in [
            (1, Barrier::Lbs),
            (60, Barrier::Lbs),
            (528, Barrier::Lbs),
            (529, ilbs),
            (1056, ilbs),
            (1057, Barrier::Relay),
            (4224, Barrier::Relay),
            (u32::MAX, Barrier::Relay),
        ] {
            assert_eq!(choose(H200, 132, blocks), barrier, "{blocks}");
        }
    }

    #[test]
    fn every_choice_is_a_device_barrier_without_special_launch_needs() {
        for row in HOPPER {
            assert!(Barrier::DEVICE.contains(&row.barrier));
            assert_ne!(row.barrier, Barrier::Cooperative, "needs cooperative launch, which not every GPU has");
        }
        assert_eq!(HOPPER.last().map(|row| row.blocks_per_sm), Some(u32::MAX), "the table covers every grid");
        assert_eq!(choose((8, 0), 0, 5), Barrier::Ilbs { groups: None }, "a GPU reporting no SMs counts as one");
        assert_eq!(choose((8, 0), 0, 4), Barrier::Lbs);
    }
}
