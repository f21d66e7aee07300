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
/// one block per SM LBS wins: one counter, one release and one poll per block. Up to 4 the
/// cooperative barrier does, whose arrivals wait for their atomic's reply before polling and
/// so load the one counter less; at 8, ILBS's √N group counters; beyond, Relay's per-SM
/// release.
const HOPPER: &[Row] = &[
    Row { blocks_per_sm: 1, barrier: Barrier::Lbs },
    Row { blocks_per_sm: 4, barrier: Barrier::Cooperative },
    Row { blocks_per_sm: 8, barrier: Barrier::Ilbs { groups: None } },
    Row { blocks_per_sm: u32::MAX, barrier: Barrier::Relay },
];

/// The table for a compute capability. Only Hopper has been measured; other GPUs use its
/// table too, which at worst costs speed: every barrier in it is correct on any GPU.
fn table(_compute_capability: (u32, u32)) -> &'static [Row] {
    HOPPER
}

/// Auto's barrier for a grid of `blocks` on a GPU with `sm_count` SMs. A GPU without
/// cooperative launch gets ILBS where the table says cooperative.
pub(crate) fn choose(compute_capability: (u32, u32), sm_count: u32, cooperative_launch: bool, blocks: u32) -> Barrier {
    let sm_count = sm_count.max(1);
    let chosen = table(compute_capability)
        .iter()
        .find(|row| u64::from(blocks) <= u64::from(row.blocks_per_sm) * u64::from(sm_count))
        .map_or(Barrier::Relay, |row| row.barrier);
    if chosen == Barrier::Cooperative && !cooperative_launch {
        Barrier::Ilbs { groups: None }
    } else {
        chosen
    }
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
            (132, Barrier::Lbs),
            (133, Barrier::Cooperative),
            (528, Barrier::Cooperative),
            (529, ilbs),
            (1056, ilbs),
            (1057, Barrier::Relay),
            (4224, Barrier::Relay),
            (u32::MAX, Barrier::Relay),
        ] {
            assert_eq!(choose(H200, 132, true, blocks), barrier, "{blocks}");
        }
    }

    #[test]
    fn without_cooperative_launch_auto_never_picks_it() {
        for blocks in [1, 264, 4224] {
            assert_ne!(choose(H200, 132, false, blocks), Barrier::Cooperative, "{blocks}");
        }
    }

    #[test]
    fn every_choice_is_a_device_barrier() {
        for row in HOPPER {
            assert!(Barrier::DEVICE.contains(&row.barrier));
        }
        assert_eq!(HOPPER.last().map(|row| row.blocks_per_sm), Some(u32::MAX), "the table covers every grid");
        assert_eq!(choose((8, 0), 0, true, 3), Barrier::Cooperative, "a GPU reporting no SMs counts as one");
        assert_eq!(choose((8, 0), 0, true, 1), Barrier::Lbs);
    }
}
