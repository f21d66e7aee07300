//! [`Barrier::Auto`]: for each launch, the device barrier measured fastest for its grid.
//!
//! The choice comes from a table: rows that each cover grids of up to `blocks_per_sm` blocks
//! per SM, the first row that covers the grid naming its barrier. Hopper's table is built in,
//! measured with `examples/barrier_cost` (docs/results.md has the runs). A GPU of any other
//! generation measures its own once (`cuda/calibrate.rs`), keeps it beside the kernel cache,
//! and says so in every report of an Auto launch ([`AutoChoice`]).

use std::fmt;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use super::Barrier;

/// One row of a table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Row {
    /// The row covers grids of at most this many blocks per SM.
    pub blocks_per_sm: u32,
    /// The fastest barrier there.
    pub barrier: Barrier,
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

/// The GPU Hopper's table was measured on.
const HOPPER_MEASURED_ON: &str = "an NVIDIA H200";

/// Where the table Auto chooses from came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AutoSource {
    /// gsync's own table for the GPU's generation, measured on the GPU named.
    Measured {
        /// The GPU the table was measured on.
        on: &'static str,
    },
    /// Measured on this GPU by this process, and kept at `cached` (when it could be written).
    Calibrated {
        /// The file the table was written to.
        cached: Option<PathBuf>,
    },
    /// Measured on this GPU by an earlier process, read from `path`.
    Cached {
        /// The file the table was read from.
        path: PathBuf,
    },
    /// No table of this GPU's own: Hopper's, for the reason given (every barrier in it is
    /// correct on any GPU, at worst slower).
    Borrowed {
        /// Why this GPU has no table of its own.
        reason: String,
    },
}

impl fmt::Display for AutoSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AutoSource::Measured { on } => write!(f, "gsync's table for this GPU generation, measured on {on}"),
            AutoSource::Calibrated { cached: Some(path) } => {
                write!(f, "the table calibrated on this GPU now, kept in {}", path.display())
            }
            AutoSource::Calibrated { cached: None } => write!(f, "the table calibrated on this GPU now (not kept)"),
            AutoSource::Cached { path } => {
                write!(f, "the table calibrated on this GPU earlier, read from {}", path.display())
            }
            AutoSource::Borrowed { reason } => write!(f, "Hopper's table, since {reason}"),
        }
    }
}

/// The rows Auto chooses from on one GPU, and where they came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AutoTable {
    rows: Vec<Row>,
    source: AutoSource,
}

impl AutoTable {
    /// Hopper's measured table.
    pub(crate) fn hopper() -> AutoTable {
        AutoTable { rows: HOPPER.to_vec(), source: AutoSource::Measured { on: HOPPER_MEASURED_ON } }
    }

    /// Hopper's measured table, made once per process: what a device without a table of its
    /// own (the emulator) chooses from.
    pub(crate) fn shared_hopper() -> Arc<AutoTable> {
        static TABLE: OnceLock<Arc<AutoTable>> = OnceLock::new();
        TABLE.get_or_init(|| Arc::new(AutoTable::hopper())).clone()
    }

    /// Hopper's table, borrowed by a GPU without one of its own, for `reason`.
    pub(crate) fn borrowed(reason: String) -> AutoTable {
        AutoTable { rows: HOPPER.to_vec(), source: AutoSource::Borrowed { reason } }
    }

    /// The built-in table of a GPU of `compute_capability`, if its generation has one.
    pub(crate) fn built_in(compute_capability: (u32, u32)) -> Option<AutoTable> {
        (compute_capability.0 == 9).then(AutoTable::hopper)
    }

    /// The table of the fastest barrier measured at each number of blocks per SM in
    /// `fastest` (ascending), its runs of one barrier merged, its last row covering every grid.
    pub(crate) fn from_levels(fastest: &[(u32, Barrier)], source: AutoSource) -> Option<AutoTable> {
        let mut rows: Vec<Row> = Vec::new();
        for &(blocks_per_sm, barrier) in fastest {
            match rows.last_mut() {
                Some(last) if last.barrier == barrier => last.blocks_per_sm = blocks_per_sm,
                _ => rows.push(Row { blocks_per_sm, barrier }),
            }
        }
        rows.last_mut()?.blocks_per_sm = u32::MAX;
        Some(AutoTable { rows, source })
    }

    /// Where the table came from.
    pub fn source(&self) -> &AutoSource {
        &self.source
    }

    /// The table's rows: the largest grid each covers, in blocks per SM (`u32::MAX`: any), and
    /// its barrier.
    pub fn rows(&self) -> impl Iterator<Item = (u32, Barrier)> + '_ {
        self.rows.iter().map(|row| (row.blocks_per_sm, row.barrier))
    }

    /// Auto's choice for a grid of `blocks` on a GPU with `sm_count` SMs.
    pub(crate) fn choose(&self, sm_count: u32, blocks: u32) -> AutoChoice {
        let sm_count = sm_count.max(1);
        let row = self
            .rows
            .iter()
            .find(|row| u64::from(blocks) <= u64::from(row.blocks_per_sm) * u64::from(sm_count))
            .copied()
            .unwrap_or(Row { blocks_per_sm: u32::MAX, barrier: Barrier::Relay });
        AutoChoice { barrier: row.barrier, up_to_blocks_per_sm: row.blocks_per_sm, source: self.source.clone() }
    }

    /// The table as the text kept on disk: a line per row, `blocks_per_sm barrier`.
    pub(crate) fn to_text(&self) -> String {
        self.rows.iter().map(|row| format!("{} {}\n", row.blocks_per_sm, row.barrier)).collect()
    }

    /// The table kept on disk as `text`, with `source`; `None` for anything malformed (the
    /// rows must grow, name device barriers, and end with one covering every grid).
    pub(crate) fn from_text(text: &str, source: AutoSource) -> Option<AutoTable> {
        let mut rows = Vec::new();
        for line in text.lines().filter(|line| !line.trim().is_empty()) {
            let (blocks, barrier) = line.trim().split_once(' ')?;
            let row = Row { blocks_per_sm: blocks.parse().ok()?, barrier: barrier.trim().parse().ok()? };
            let grows = rows.last().is_none_or(|last: &Row| last.blocks_per_sm < row.blocks_per_sm);
            if !grows || !row.barrier.takes_any_grid() {
                return None;
            }
            rows.push(row);
        }
        (rows.last()?.blocks_per_sm == u32::MAX).then_some(AutoTable { rows, source })
    }
}

impl Barrier {
    /// Whether Auto may name it: a device barrier that takes any grid, with an ordinary
    /// launch (not the cooperative one, which not every GPU has, nor LFS, whose grid is at
    /// most its block size).
    pub(crate) fn takes_any_grid(self) -> bool {
        Barrier::DEVICE.contains(&self) && !matches!(self, Barrier::Cooperative | Barrier::Lfs)
    }
}

/// Which barrier [`Barrier::Auto`] ran, and why: the row of which table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AutoChoice {
    /// The barrier that ran.
    pub barrier: Barrier,
    /// The largest grid, in blocks per SM, of the row that chose it (`u32::MAX`: any).
    pub up_to_blocks_per_sm: u32,
    /// The table the row belongs to.
    pub source: AutoSource,
}

impl fmt::Display for AutoChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.up_to_blocks_per_sm {
            u32::MAX => write!(f, "Auto ran {}: the fastest for the largest grids in {}", self.barrier, self.source),
            most => write!(
                f,
                "Auto ran {}: the fastest for grids of up to {most} blocks per SM in {}",
                self.barrier, self.source
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hopper_follows_the_measured_table() {
        let ilbs = Barrier::Ilbs { groups: None };
        let table = AutoTable::built_in((9, 0)).expect("Hopper has a table");
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
            assert_eq!(table.choose(132, blocks).barrier, barrier, "{blocks}");
        }
        let choice = table.choose(132, 60);
        assert_eq!(
            choice.to_string(),
            "Auto ran lbs: the fastest for grids of up to 4 blocks per SM in gsync's table for this GPU \
             generation, measured on an NVIDIA H200"
        );
        assert!(AutoTable::built_in((8, 0)).is_none() && AutoTable::built_in((10, 0)).is_none());
    }

    #[test]
    fn every_choice_is_a_device_barrier_without_special_launch_needs() {
        for row in HOPPER {
            assert!(row.barrier.takes_any_grid(), "{}", row.barrier);
        }
        assert!(!Barrier::Cooperative.takes_any_grid(), "needs cooperative launch, which not every GPU has");
        assert!(!Barrier::Lfs.takes_any_grid(), "a grid of at most its block size");
        assert_eq!(HOPPER.last().map(|row| row.blocks_per_sm), Some(u32::MAX), "the table covers every grid");
        let table = AutoTable::hopper();
        assert_eq!(table.choose(0, 5).barrier, Barrier::Ilbs { groups: None }, "a GPU reporting no SMs counts as one");
        assert_eq!(table.choose(0, 4).barrier, Barrier::Lbs);
    }

    #[test]
    fn measured_levels_merge_into_rows_that_cover_every_grid() {
        let ulfs = Barrier::Ulfs;
        let levels = [(1, Barrier::Lbs), (2, Barrier::Lbs), (4, ulfs), (8, ulfs), (16, Barrier::Relay)];
        let table = AutoTable::from_levels(&levels, AutoSource::Calibrated { cached: None }).expect("levels");
        assert_eq!(table.rows().collect::<Vec<_>>(), [(2, Barrier::Lbs), (8, ulfs), (u32::MAX, Barrier::Relay)]);
        assert_eq!(table.choose(100, 800).barrier, ulfs);
        assert_eq!(table.choose(100, 100_000).barrier, Barrier::Relay);
        assert!(AutoTable::from_levels(&[], AutoSource::Calibrated { cached: None }).is_none());
    }

    #[test]
    fn a_kept_table_reads_back_and_a_malformed_one_is_refused() {
        let source = || AutoSource::Cached { path: "t".into() };
        let levels = [(1, Barrier::Lbs), (8, Barrier::Ilbs { groups: None }), (32, Barrier::Relay)];
        let table = AutoTable::from_levels(&levels, source()).expect("levels");
        assert_eq!(AutoTable::from_text(&table.to_text(), source()), Some(table));
        for malformed in [
            "",
            "4 lbs\n",
            "4 lbs\n2 relay\n4294967295 relay\n",
            "4 cooperative\n4294967295 relay\n",
            "4 multi-launch\n4294967295 relay\n",
            "4 lfs\n4294967295 relay\n",
            "four lbs\n4294967295 relay\n",
            "4 nonsense\n4294967295 relay\n",
        ] {
            assert_eq!(AutoTable::from_text(malformed, source()), None, "{malformed:?}");
        }
    }
}
