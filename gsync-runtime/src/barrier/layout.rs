//! The barrier state in device memory: the per-launch header and how many words each barrier
//! needs. `common.cuh` reads the same layout on the device.
//!
//! The state is an array of 128-byte lines. Line 0 is the header, written by the host with one
//! copy before every launch; a barrier's own words follow, each hot word on a line of its own.
//! Counters that only grow during a launch come right after the header: the host zeroes them
//! before every launch too (a barrier's `launch_words`).

/// `u32` words in one 128-byte line.
pub(crate) const LINE_WORDS: usize = 32;

/// Header word: the launch's sequence number, never 0 (`GSYNC_HEADER_SEQUENCE`).
const SEQUENCE_WORD: usize = 0;
/// Header word: the abort flag, 0 at launch (`GSYNC_HEADER_ABORT`).
const ABORT_WORD: usize = 1;
/// Header words: the watchdog limit in nanoseconds, a little-endian `u64`, 0 = off
/// (`GSYNC_HEADER_TIMEOUT`).
const TIMEOUT_WORD: usize = 2;
/// Header word: the ILBS group count (`GSYNC_HEADER_GROUPS`).
const GROUPS_WORD: usize = 4;
/// Header words: the spin-wait watchdog limit in nanoseconds, a little-endian `u64`, 0 = off
/// (`GSYNC_SPIN_TIMEOUT_WORD` in the prelude, which reads it, and the abort flag, for every
/// launch and every barrier, split runs included).
const SPIN_TIMEOUT_WORD: usize = 6;
/// Header words: the launch's deadline in nanoseconds, a little-endian `u64`, 0 = none
/// (`GSYNC_DEADLINE_WORD` in the prelude).
const DEADLINE_WORD: usize = 8;
/// Header words: the global timer when the kernel first checked its deadline, a `u64` the host
/// zeroes with the rest of the header for every launch (`GSYNC_DEADLINE_START_WORD`).
const DEADLINE_START_WORD: usize = 10;
/// Header word: the checkpoint at which a block found the deadline passed, plus one, 0 at
/// launch (`GSYNC_DEADLINE_STOP_WORD`).
const DEADLINE_STOP_WORD: usize = 12;
/// Header words: the launch's status words (`gsync_status_t`, zero at launch), which the
/// kernel's `gsync_status` parameter points at.
pub(crate) const STATUS_WORD: usize = 16;
/// Relay's arrival counters (`GSYNC_RELAY_LINES`).
const RELAY_LINES: usize = 32;
/// Relay's SM groups: census slots and release flags (`GSYNC_RELAY_GROUPS`).
const RELAY_GROUPS: usize = 512;

/// How Relay synchronizes a launch's grid: the host picks the kernel by grid size.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum RelayMode {
    /// One counter that every block adds to and polls: the launch runs LBS's kernel.
    #[default]
    Direct,
    /// Arrivals spread over 32 counters, polled by one leader per SM, which releases the
    /// blocks of its SM through a flag of their own: Relay's own kernel (`relay.cuh`).
    PerSm,
}

impl RelayMode {
    /// Blocks per SM above which the per-SM mode is faster (measured with
    /// `examples/barrier_cost` on an H200: direct mode wins up to 4 blocks per SM, per-SM from
    /// 8).
    const DIRECT_BLOCKS_PER_SM: u32 = 4;

    /// The mode for a grid of `blocks` on a GPU of `sm_count` SMs.
    pub(crate) fn for_grid(blocks: u32, sm_count: u32) -> RelayMode {
        if blocks > Self::DIRECT_BLOCKS_PER_SM.saturating_mul(sm_count.max(1)) {
            RelayMode::PerSm
        } else {
            RelayMode::Direct
        }
    }
}

/// What the host tells a launch's barrier: the first line of the barrier state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct LaunchHeader {
    /// Tags the launch's flag values, so that values from earlier launches never match.
    pub sequence: u32,
    /// How long a block may wait in one barrier, in nanoseconds; 0 = forever.
    pub watchdog_ns: u64,
    /// ILBS group count; 0 for other barriers.
    pub groups: u32,
    /// How long a `wait_until` or `with_lock` may spin, in nanoseconds; 0 = forever. Every
    /// launch has it, whatever its barrier.
    pub spin_watchdog_ns: u64,
    /// How long the whole launch may run, in nanoseconds; 0 = forever.
    pub deadline_ns: u64,
}

impl LaunchHeader {
    /// The header line as the device reads it.
    pub fn to_words(self) -> [u32; LINE_WORDS] {
        let mut words = [0; LINE_WORDS];
        words[SEQUENCE_WORD] = self.sequence;
        words[ABORT_WORD] = 0;
        // Truncations split the u64 into its little-endian halves.
        words[TIMEOUT_WORD] = self.watchdog_ns as u32;
        words[TIMEOUT_WORD + 1] = (self.watchdog_ns >> 32) as u32;
        words[GROUPS_WORD] = self.groups;
        words[SPIN_TIMEOUT_WORD] = self.spin_watchdog_ns as u32;
        words[SPIN_TIMEOUT_WORD + 1] = (self.spin_watchdog_ns >> 32) as u32;
        words[DEADLINE_WORD] = self.deadline_ns as u32;
        words[DEADLINE_WORD + 1] = (self.deadline_ns >> 32) as u32;
        // The kernel starts the deadline's clock at its first check.
        words[DEADLINE_START_WORD..DEADLINE_START_WORD + 2].fill(0);
        words[DEADLINE_STOP_WORD] = 0;
        // The status words are zero: no fault yet.
        words
    }
}

/// A limit a launch's header carries (the spin-wait watchdog, the deadline): `limit` in
/// nanoseconds, at least 1 (a zero limit still times out), or 0 when the launch has none.
pub(crate) fn limit_ns(limit: Option<std::time::Duration>) -> u64 {
    limit.map_or(0, |limit| u64::try_from(limit.as_nanos()).unwrap_or(u64::MAX).max(1))
}

/// Words of state for `lines` lines.
fn lines(lines: usize) -> usize {
    lines * LINE_WORDS
}

/// A barrier that keeps no state of its own still gets the header line.
pub(crate) fn header_only(_blocks: u32, _threads: u32) -> usize {
    lines(1)
}

/// Barriers whose only per-launch words are the header.
pub(crate) fn header_only_per_launch(_blocks: u32, _groups: u32) -> usize {
    lines(1)
}

/// LBS: the header and the counter.
pub(crate) fn lbs_words(_blocks: u32, _threads: u32) -> usize {
    lines(2)
}

/// LBS zeroes its counter before every launch.
pub(crate) fn lbs_launch_words(_blocks: u32, _groups: u32) -> usize {
    lines(2)
}

/// ILBS: the header, the grid counter, and a counter per group (at most one group per block,
/// so the state need not change with the group count).
pub(crate) fn ilbs_words(blocks: u32, _threads: u32) -> usize {
    lines(2 + blocks as usize)
}

/// ILBS zeroes the grid counter and the counters of this launch's groups.
pub(crate) fn ilbs_launch_words(_blocks: u32, groups: u32) -> usize {
    lines(2 + groups as usize)
}

/// Relay: the header, the arrival counters, the census (packed words), and a release flag per
/// SM group.
pub(crate) fn relay_words(_blocks: u32, _threads: u32) -> usize {
    relay_launch_words(0, 0) + lines(RELAY_GROUPS)
}

/// Relay zeroes its counters and the census before every launch; the flags carry tags.
pub(crate) fn relay_launch_words(_blocks: u32, _groups: u32) -> usize {
    lines(1 + RELAY_LINES) + RELAY_GROUPS
}

/// LFS: the header, then an arrival and a release slot per block.
pub(crate) fn lfs_words(blocks: u32, _threads: u32) -> usize {
    lines(1 + 2 * blocks as usize)
}

/// ULFS: the header, then an arrival and a release slot per node of every level.
pub(crate) fn ulfs_words(blocks: u32, threads: u32) -> usize {
    let nodes: usize = ulfs_levels(blocks, threads).iter().map(|&nodes| nodes as usize).sum();
    lines(1 + 2 * nodes)
}

/// The fan-out of the ULFS tree: one gathering thread per member, and at least 2 so that the
/// tree shrinks (`GSYNC_ULFS_FANOUT`).
pub(crate) fn ulfs_fanout(threads: u32) -> u32 {
    threads.max(2)
}

/// Nodes of each level of the ULFS tree that has slots (more than one node), leaves first.
/// The root level, with one node, comes on top: the paper's m = ⌈log_B N⌉ + 1 levels.
pub(crate) fn ulfs_levels(blocks: u32, threads: u32) -> Vec<u32> {
    let fanout = ulfs_fanout(threads);
    let mut levels = Vec::new();
    let mut nodes = blocks;
    while nodes > 1 {
        levels.push(nodes);
        nodes = nodes.div_ceil(fanout);
    }
    levels
}

/// The ILBS default: round(√blocks) groups, which minimises ⌈N/g⌉ + g atomic additions.
pub(crate) fn default_ilbs_groups(blocks: u32) -> u32 {
    // Every u32 is exact in an f64, and so is the rounded root.
    let root = f64::from(blocks).sqrt().round() as u32;
    root.clamp(1, blocks.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    const COMMON: &str = include_str!("common.cuh");

    #[test]
    fn the_header_encodes_each_field_in_its_word() {
        let header = LaunchHeader {
            sequence: 7,
            watchdog_ns: 0x1_2345_6789,
            groups: 11,
            spin_watchdog_ns: 0x2_0000_0003,
            deadline_ns: 0x4_0000_0005,
        };
        let words = header.to_words();
        assert_eq!(words[..10], [7, 0, 0x2345_6789, 1, 11, 0, 3, 2, 5, 4]);
        assert!(words[10..].iter().all(|&word| word == 0), "the status words among them: no fault yet");
        assert_eq!(size_of_val(&words), 128, "the header is one line");
    }

    #[test]
    fn the_device_reads_the_header_where_the_host_writes_it() {
        for (define, word) in [
            ("GSYNC_LINE_WORDS 32u", LINE_WORDS),
            ("GSYNC_HEADER_SEQUENCE 0u", SEQUENCE_WORD),
            ("GSYNC_HEADER_ABORT 1u", ABORT_WORD),
            ("GSYNC_HEADER_TIMEOUT 2u", TIMEOUT_WORD),
            ("GSYNC_HEADER_GROUPS 4u", GROUPS_WORD),
        ] {
            assert!(COMMON.contains(&format!("#define {define}")), "common.cuh lacks {define} ({word})");
        }
        let relay = include_str!("relay.cuh");
        for define in [format!("GSYNC_RELAY_LINES {RELAY_LINES}u"), format!("GSYNC_RELAY_GROUPS {RELAY_GROUPS}u")] {
            assert!(relay.contains(&format!("#define {define}")), "relay.cuh lacks {define}");
        }
        assert_eq!(TIMEOUT_WORD % 2, 0, "the u64 timeout is 8-byte aligned");
        const { assert!(STATUS_WORD > DEADLINE_STOP_WORD, "the status words follow the header's fields") };
        assert_eq!(STATUS_WORD % 2, 0, "gsync_status_t holds u64 fields");
        const { assert!(STATUS_WORD + crate::core::status::STATUS_WORDS <= LINE_WORDS, "the status words are in the line") };
        let prelude = include_str!("../core/prelude.cuh");
        for define in [
            format!("GSYNC_SPIN_ABORT_WORD {ABORT_WORD}u"),
            format!("GSYNC_SPIN_TIMEOUT_WORD {SPIN_TIMEOUT_WORD}u"),
            format!("GSYNC_DEADLINE_WORD {DEADLINE_WORD}u"),
            format!("GSYNC_DEADLINE_START_WORD {DEADLINE_START_WORD}u"),
            format!("GSYNC_DEADLINE_STOP_WORD {DEADLINE_STOP_WORD}u"),
        ] {
            assert!(prelude.contains(&format!("#define {define}")), "prelude.cuh lacks {define}");
        }
        assert_eq!(SPIN_TIMEOUT_WORD % 2, 0, "the u64 spin timeout is 8-byte aligned");
        assert_eq!(DEADLINE_WORD % 2, 0, "the u64 deadline is 8-byte aligned");
        assert_eq!(DEADLINE_START_WORD % 2, 0, "the u64 start is 8-byte aligned");
    }

    #[test]
    fn the_spin_watchdog_is_in_nanoseconds_and_never_zero_when_set() {
        use std::time::Duration;
        assert_eq!(limit_ns(Some(Duration::from_millis(1500))), 1_500_000_000);
        assert_eq!(limit_ns(Some(Duration::ZERO)), 1);
        assert_eq!(limit_ns(Some(Duration::MAX)), u64::MAX);
        assert_eq!(limit_ns(None), 0);
    }

    #[test]
    fn state_sizes_include_the_header_and_a_line_per_hot_word() {
        assert_eq!(header_only(1000, 256), 32);
        assert_eq!(lbs_words(1000, 256), 2 * 32);
        assert_eq!(ilbs_words(100, 256), (2 + 100) * 32);
        assert_eq!(relay_words(1000, 256), (1 + 32 + 16 + 512) * 32);
        assert_eq!(lfs_words(100, 256), (1 + 200) * 32);
        assert_eq!(ulfs_words(1, 256), 32, "one block needs no slots");
    }

    #[test]
    fn the_words_zeroed_before_a_launch_start_with_the_header_and_fit_in_the_state() {
        assert_eq!(lbs_launch_words(100, 0), lbs_words(100, 256));
        assert_eq!(ilbs_launch_words(100, 10), (2 + 10) * 32);
        assert!(ilbs_launch_words(100, 100) <= ilbs_words(100, 256), "one group per block at most");
        // The census ends where the flags begin: GSYNC_RELAY_FLAG_SLOT counts from line 1.
        let flag_slot = "#define GSYNC_RELAY_FLAG_SLOT (GSYNC_RELAY_LINES + GSYNC_RELAY_GROUPS / GSYNC_LINE_WORDS)";
        assert!(include_str!("relay.cuh").contains(flag_slot));
        assert_eq!(relay_launch_words(0, 0), (1 + RELAY_LINES + RELAY_GROUPS / LINE_WORDS) * LINE_WORDS);
        assert!(relay_launch_words(0, 0) < relay_words(0, 0));
    }

    #[test]
    fn relay_goes_per_sm_beyond_four_blocks_per_sm() {
        assert_eq!(RelayMode::for_grid(7, 132), RelayMode::Direct);
        assert_eq!(RelayMode::for_grid(528, 132), RelayMode::Direct);
        assert_eq!(RelayMode::for_grid(529, 132), RelayMode::PerSm);
        assert_eq!(RelayMode::for_grid(4224, 132), RelayMode::PerSm);
        assert_eq!(RelayMode::for_grid(5, 0), RelayMode::PerSm, "a GPU reporting no SMs counts as one");
    }

    #[test]
    fn ulfs_is_lfs_while_the_grid_fits_in_one_group() {
        for blocks in [2, 7, 255, 256] {
            assert_eq!(ulfs_words(blocks, 256), lfs_words(blocks, 256));
            assert_eq!(ulfs_levels(blocks, 256), [blocks]);
        }
        assert_eq!(ulfs_levels(257, 256), [257, 2]);
    }

    #[test]
    fn ulfs_levels_follow_the_paper_s_level_count() {
        // 4224 blocks of 32 threads (a full H200): three levels of slots under the root.
        assert_eq!(ulfs_levels(4224, 32), [4224, 132, 5]);
        assert_eq!(ulfs_words(4224, 32), (1 + 2 * (4224 + 132 + 5)) * 32);
        for (blocks, threads) in [(2, 32), (32, 32), (33, 32), (1024, 32), (1025, 32), (4224, 32), (100_000, 64)] {
            // m = ⌈log_B N⌉ + 1, with the logarithm taken exactly: the least k with B^k ≥ N.
            let log = (0..).find(|&k| u64::from(threads).pow(k) >= u64::from(blocks)).unwrap_or(0);
            assert_eq!(ulfs_levels(blocks, threads).len() + 1, log as usize + 1, "{blocks} blocks of {threads}");
        }
    }

    #[test]
    fn one_thread_blocks_still_get_a_shrinking_tree() {
        assert_eq!(ulfs_fanout(1), 2);
        assert_eq!(ulfs_levels(5, 1), [5, 3, 2]);
    }

    #[test]
    fn the_default_group_count_is_the_rounded_square_root() {
        assert_eq!(default_ilbs_groups(1), 1);
        assert_eq!(default_ilbs_groups(2), 1);
        assert_eq!(default_ilbs_groups(3), 2);
        assert_eq!(default_ilbs_groups(132), 11);
        assert_eq!(default_ilbs_groups(4224), 65);
        assert_eq!(default_ilbs_groups(0), 1);
        assert_eq!(default_ilbs_groups(u32::MAX), 65536);
    }
}
