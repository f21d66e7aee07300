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

/// Hopper (compute capability 9.x), measured on an H200. Relay wins while there is at most one
/// block per SM (one counter, one hop) and from 8 blocks per SM on (its per-SM release);
/// between, the cooperative barrier's arrivals, which wait for their atomic's reply before
/// polling, load the one counter less than Relay's direct mode does.
const HOPPER: &[Row] = &[
    Row { blocks_per_sm: 1, barrier: Barrier::Relay },
    Row { blocks_per_sm: 4, barrier: Barrier::Cooperative },
    Row { blocks_per_sm: u32::MAX, barrier: Barrier::Relay },
];

/// The table for a compute capability. Only Hopper has been measured; other GPUs use its
/// table too, which at worst costs speed: every barrier in it is correct on any GPU.
fn table(_compute_capability: (u32, u32)) -> &'static [Row] {
    HOPPER
}

/// Auto's barrier for a grid of `blocks` on a GPU with `sm_count` SMs. A GPU without
/// cooperative launch gets Relay where the table says cooperative.
pub(crate) fn choose(compute_capability: (u32, u32), sm_count: u32, cooperative_launch: bool, blocks: u32) -> Barrier {
    let sm_count = sm_count.max(1);
    let chosen = table(compute_capability)
        .iter()
        .find(|row| u64::from(blocks) <= u64::from(row.blocks_per_sm) * u64::from(sm_count))
        .map_or(Barrier::Relay, |row| row.barrier);
    if chosen == Barrier::Cooperative && !cooperative_launch {
        Barrier::Relay
    } else {
        chosen
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const H200: (u32, u32) = (9, 0);

    #[test]
    fn hopper_uses_relay_up_to_one_block_per_sm_and_beyond_four() {
        for blocks in [1, 7, 60, 132] {
            assert_eq!(choose(H200, 132, true, blocks), Barrier::Relay, "{blocks}");
        }
        for blocks in [133, 264, 528] {
            assert_eq!(choose(H200, 132, true, blocks), Barrier::Cooperative, "{blocks}");
        }
        for blocks in [529, 1056, 2112, 4224, u32::MAX] {
            assert_eq!(choose(H200, 132, true, blocks), Barrier::Relay, "{blocks}");
        }
    }

    #[test]
    fn without_cooperative_launch_auto_never_picks_it() {
        for blocks in [1, 264, 4224] {
            assert_eq!(choose(H200, 132, false, blocks), Barrier::Relay, "{blocks}");
        }
    }

    #[test]
    fn every_choice_is_a_device_barrier() {
        for row in HOPPER {
            assert!(Barrier::DEVICE.contains(&row.barrier));
        }
        assert_eq!(HOPPER.last().map(|row| row.blocks_per_sm), Some(u32::MAX), "the table covers every grid");
        assert_eq!(choose((8, 0), 0, true, 3), Barrier::Cooperative, "a GPU reporting no SMs counts as one");
    }
}
