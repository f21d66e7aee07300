//! What a replication runs: every configuration of every experiment, decided
//! before anything runs from the settings and the co-resident grid limits.

use gsync::Barrier;

use crate::error::Result;
use crate::model::Experiment;
use crate::paper;
use crate::workloads::ProblemSpec;

/// Everything that decides what runs; recorded in `meta.csv`.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    /// Timed repetitions per configuration (after one warm-up).
    pub reps: u32,
    /// Seed of every input.
    pub seed: u64,
    /// The experiments to run.
    pub experiments: Vec<Experiment>,
    /// Grid sizes of the paper's setting (7…60).
    pub paper_blocks: Vec<u32>,
    /// Bitonic problem in the paper's setting.
    pub bitonic: ProblemSpec,
    /// Smith-Waterman problem in the paper's setting.
    pub smith_waterman: ProblemSpec,
    /// The empty-phases problem (P phases), for every block size.
    pub empty: ProblemSpec,
    /// Grids of the ILBS group sweep; `None` stands for the largest co-resident grid.
    pub group_blocks: Vec<Option<u32>>,
    /// The applications join the group sweep only on grids up to this size.
    pub group_apps_max_blocks: u32,
    /// Multiples k of the block size around which ULFS is measured (k·B − 1, k·B, k·B + 1).
    pub multiples: Vec<u32>,
    /// Block sizes of the extended sweep.
    pub block_sizes: Vec<u32>,
    /// Bitonic keys in the extended sweep (tiles of 2 × threads keys).
    pub ext_bitonic_n: usize,
    /// Smith-Waterman sequence length in the extended sweep (tiles 2 × threads wide).
    pub ext_sw_len: usize,
    /// An upper bound on every grid (the emulator reports no co-residency limit).
    pub max_blocks: Option<u32>,
}

impl Settings {
    /// The bitonic problem of the extended sweep at `threads` threads per block.
    pub fn ext_bitonic(&self, threads: u32) -> ProblemSpec {
        ProblemSpec::Bitonic { n: self.ext_bitonic_n, tile: 2 * threads as usize }
    }

    /// The Smith-Waterman problem of the extended sweep at `threads` threads per block.
    pub fn ext_smith_waterman(&self, threads: u32) -> ProblemSpec {
        ProblemSpec::SmithWaterman { m: self.ext_sw_len, n: self.ext_sw_len, tile_cols: 2 * threads }
    }
}

/// One grid of one problem, and the barriers compared on it; their repetitions are interleaved.
#[derive(Clone, Debug, PartialEq)]
pub struct Cell {
    /// The experiment it belongs to.
    pub experiment: Experiment,
    /// The problem.
    pub spec: ProblemSpec,
    /// Threads per block.
    pub threads: u32,
    /// Blocks.
    pub blocks: u32,
    /// The barriers, each run once as a warm-up and then `reps` times.
    pub barriers: Vec<Barrier>,
}

impl Cell {
    /// Launches this cell makes with `reps` repetitions, warm-ups included (empty phases: two per run).
    pub fn launches(&self, reps: u32) -> u64 {
        let per_run = if matches!(self.spec, ProblemSpec::Empty { .. }) { 2 } else { 1 };
        self.barriers.len() as u64 * u64::from(reps + 1) * per_run
    }
}

/// The barriers of the paper's setting, in the report's order: every barrier, ILBS with the
/// paper's 6 groups and with round(√N).
pub const PAPER_BARRIERS: [Barrier; 7] = [
    Barrier::Cooperative,
    Barrier::Lbs,
    Barrier::Ilbs { groups: Some(paper::ILBS_GROUPS) },
    Barrier::Ilbs { groups: None },
    Barrier::Lfs,
    Barrier::Ulfs,
    Barrier::MultiLaunch,
];

/// Barriers timed beside the paper's as extra columns: gsync's own Relay. They take no part
/// in the verdicts or the advice, which rank [`PAPER_BARRIERS`] only.
pub const EXTRA_BARRIERS: [Barrier; 1] = [Barrier::Relay];

/// The runs of the paper's setting: [`PAPER_BARRIERS`], then [`EXTRA_BARRIERS`].
pub fn paper_barriers() -> Vec<Barrier> {
    PAPER_BARRIERS.iter().chain(&EXTRA_BARRIERS).copied().collect()
}

/// The barriers of the extended sweep: every barrier, ILBS with √N groups, and the extras.
pub fn extended_barriers() -> Vec<Barrier> {
    let paper = [
        Barrier::Cooperative,
        Barrier::Lbs,
        Barrier::Ilbs { groups: None },
        Barrier::Lfs,
        Barrier::Ulfs,
        Barrier::MultiLaunch,
    ];
    paper.iter().chain(&EXTRA_BARRIERS).copied().collect()
}

/// The barriers around multiples of the block size: ULFS, and LBS as a control without a tree.
pub fn multiples_barriers() -> Vec<Barrier> {
    vec![Barrier::Ulfs, Barrier::Lbs]
}

/// ILBS group counts tried on `blocks` blocks: every count up to 64 blocks;
/// beyond, a geometric ladder, the neighbourhood of √N, and N itself.
pub fn group_counts(blocks: u32) -> Vec<u32> {
    if blocks <= 64 {
        return (1..=blocks).collect();
    }
    let root = Barrier::default_ilbs_groups(blocks);
    let mut counts: Vec<u32> = Vec::new();
    let mut g = 1u32;
    while g <= blocks {
        counts.push(g);
        counts.push(g + g / 2); // 1, 1, 2, 3, 4, 6, 8, 12, …
        g *= 2;
    }
    counts.extend(root.saturating_sub(2)..=root + 2);
    counts.push(blocks);
    counts.retain(|&c| (1..=blocks).contains(&c));
    counts.sort_unstable();
    counts.dedup();
    counts
}

/// Grids of the extended sweep: fractions and multiples of the SM count, the
/// block size and one more (where LFS stops and ULFS grows a level), and the
/// largest co-resident grid; all within 1…`max`.
pub fn extended_grids(sm_count: u32, threads: u32, max: u32) -> Vec<u32> {
    let mut grids: Vec<u32> = [1u32, 2, 4, 8, 16, 32, 64].iter().map(|&k| k.saturating_mul(sm_count)).collect();
    grids.extend([sm_count / 4, sm_count / 2, threads, threads + 1, max]);
    grids.retain(|&g| (1..=max).contains(&g));
    grids.sort_unstable();
    grids.dedup();
    grids
}

/// Grids around the multiples `ks` of the block size: k·B − 1, k·B, k·B + 1, within `max`.
pub fn multiple_grids(block_size: u32, ks: &[u32], max: u32) -> Vec<u32> {
    let mut grids: Vec<u32> = Vec::new();
    for &k in ks {
        let at = k.saturating_mul(block_size);
        if at < max && at >= 2 {
            grids.extend([at - 1, at, at + 1]);
        }
    }
    grids.sort_unstable();
    grids.dedup();
    grids
}

/// Asks how many blocks of a problem can be co-resident at a block size.
pub type Limits<'a> = dyn FnMut(ProblemSpec, u32) -> Result<u32> + 'a;

/// Every cell of the replication, in the order it runs. `sm_count` is the GPU's;
/// `limits` gives the largest co-resident grid of a problem at a block size.
pub fn build(settings: &Settings, sm_count: u32, limits: &mut Limits<'_>) -> Result<Vec<Cell>> {
    let mut cells = Vec::new();
    let cap = |max: u32| settings.max_blocks.map_or(max, |cap| cap.min(max));
    let b = paper::BLOCK_SIZE;
    for &experiment in &settings.experiments {
        match experiment {
            Experiment::Paper => {
                // Every grid of the paper, even one the GPU could not hold: the runtime's refusal is recorded.
                for spec in [settings.smith_waterman, settings.bitonic, settings.empty] {
                    for &blocks in &settings.paper_blocks {
                        cells.push(Cell { experiment, spec, threads: b, blocks, barriers: paper_barriers() });
                    }
                }
            }
            Experiment::Groups => {
                for spec in [settings.empty, settings.smith_waterman, settings.bitonic] {
                    let max = cap(limits(spec, b)?);
                    let mut grids: Vec<u32> = settings.group_blocks.iter().map(|g| g.unwrap_or(max).min(max)).collect();
                    grids.sort_unstable();
                    grids.dedup();
                    let app = !matches!(spec, ProblemSpec::Empty { .. });
                    for blocks in grids.into_iter().filter(|&n| !app || n <= settings.group_apps_max_blocks) {
                        let barriers = group_counts(blocks).into_iter().map(|g| Barrier::Ilbs { groups: Some(g) });
                        cells.push(Cell { experiment, spec, threads: b, blocks, barriers: barriers.collect() });
                    }
                }
            }
            Experiment::Multiples => {
                for spec in [settings.empty, settings.smith_waterman, settings.bitonic] {
                    let max = cap(limits(spec, b)?);
                    for blocks in multiple_grids(b, &settings.multiples, max) {
                        cells.push(Cell { experiment, spec, threads: b, blocks, barriers: multiples_barriers() });
                    }
                }
            }
            Experiment::Extended => {
                for &threads in &settings.block_sizes {
                    let specs = [settings.empty, settings.ext_smith_waterman(threads), settings.ext_bitonic(threads)];
                    for spec in specs {
                        let max = cap(limits(spec, threads)?);
                        for blocks in extended_grids(sm_count, threads, max) {
                            cells.push(Cell { experiment, spec, threads, blocks, barriers: extended_barriers() });
                        }
                    }
                }
            }
        }
    }
    Ok(cells)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Settings like the defaults, small enough to reason about.
    pub(crate) fn settings() -> Settings {
        Settings {
            reps: 3,
            seed: 1,
            experiments: Experiment::ALL.to_vec(),
            paper_blocks: paper::blocks(),
            bitonic: ProblemSpec::Bitonic { n: 1 << 14, tile: 64 },
            smith_waterman: ProblemSpec::SmithWaterman { m: 7680, n: 1920, tile_cols: 32 },
            empty: ProblemSpec::Empty { phases: 500 },
            group_blocks: vec![Some(36), Some(60), None],
            group_apps_max_blocks: 64,
            multiples: vec![1, 2, 32],
            block_sizes: vec![32, 256, 1024],
            ext_bitonic_n: 1 << 20,
            ext_sw_len: 8192,
            max_blocks: None,
        }
    }

    /// Co-residency of an H200-like GPU: 32 blocks of 32 threads per SM, fewer for larger blocks.
    fn h200(_: ProblemSpec, threads: u32) -> Result<u32> {
        Ok(132 * (2048 / threads).min(32))
    }

    #[test]
    fn the_paper_setting_compares_every_barrier_on_7_to_60_blocks_of_32_threads() {
        let mut s = settings();
        s.experiments = vec![Experiment::Paper];
        let cells = build(&s, 132, &mut h200).expect("plan");
        assert_eq!(cells.len(), 3 * 54);
        assert!(cells.iter().all(|c| c.threads == 32 && (7..=60).contains(&c.blocks)));
        let barriers = &cells[0].barriers;
        assert!(barriers.contains(&Barrier::Ilbs { groups: Some(6) }) && barriers.contains(&Barrier::Lfs));
        assert_eq!(barriers.len(), 8);
        assert_eq!(barriers.last(), Some(&Barrier::Relay), "the extra column comes after the paper's barriers");
        // LFS past 32 blocks stays in the plan: it is recorded as refused, not left out.
        assert!(cells.iter().any(|c| c.blocks == 33 && c.barriers.contains(&Barrier::Lfs)));
    }

    #[test]
    fn group_counts_cover_every_count_on_small_grids_and_surround_the_root_on_large_ones() {
        assert_eq!(group_counts(36), (1..=36).collect::<Vec<_>>());
        let large = group_counts(4224);
        for g in [1, 2, 3, 63, 64, 65, 66, 67, 4224] {
            assert!(large.contains(&g), "{g} in {large:?}");
        }
        assert!(large.windows(2).all(|w| w[0] < w[1]));
        assert!(large.len() < 40, "{}", large.len());
    }

    #[test]
    fn extended_grids_stop_at_the_coresident_limit() {
        assert_eq!(extended_grids(132, 32, 4224), vec![32, 33, 66, 132, 264, 528, 1056, 2112, 4224]);
        assert_eq!(extended_grids(132, 256, 1056), vec![33, 66, 132, 256, 257, 264, 528, 1056]);
        assert_eq!(extended_grids(132, 1024, 264), vec![33, 66, 132, 264]);
        assert_eq!(extended_grids(2, 32, 8), vec![1, 2, 4, 8]);
    }

    #[test]
    fn multiples_bracket_each_multiple_that_fits() {
        assert_eq!(multiple_grids(32, &[1, 2, 32], 4224), vec![31, 32, 33, 63, 64, 65, 1023, 1024, 1025]);
        assert_eq!(multiple_grids(32, &[1, 2, 32], 64), vec![31, 32, 33], "65 does not fit");
    }

    #[test]
    fn applications_join_the_group_sweep_only_on_small_grids() {
        let mut s = settings();
        s.experiments = vec![Experiment::Groups];
        let cells = build(&s, 132, &mut h200).expect("plan");
        let grids: Vec<(u32, bool)> =
            cells.iter().map(|c| (c.blocks, matches!(c.spec, ProblemSpec::Empty { .. }))).collect();
        assert_eq!(
            grids,
            vec![(36, true), (60, true), (4224, true), (36, false), (60, false), (36, false), (60, false)]
        );
        assert!(cells.iter().all(|c| c.barriers.iter().all(|b| matches!(b, Barrier::Ilbs { groups: Some(_) }))));
    }

    #[test]
    fn a_cap_bounds_every_grid_and_launches_are_counted() {
        let mut s = settings();
        s.max_blocks = Some(40);
        let cells = build(&s, 132, &mut h200).expect("plan");
        let (paper, others): (Vec<&Cell>, Vec<&Cell>) = cells.iter().partition(|c| c.experiment == Experiment::Paper);
        assert!(others.iter().all(|c| c.blocks <= 40), "{:?}", others.iter().map(|c| c.blocks).max());
        assert!(paper.iter().any(|c| c.blocks == 60), "the paper's grids are kept, for the runtime to refuse");
        let empty = cells.iter().find(|c| matches!(c.spec, ProblemSpec::Empty { .. })).expect("an empty cell");
        assert_eq!(empty.launches(3), 8 * 4 * 2);
    }
}
