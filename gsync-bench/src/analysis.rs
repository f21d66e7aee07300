//! From raw runs to the numbers the report states: a summary per
//! configuration, then the paper's tables, the ULFS jumps, the group sweeps,
//! the share of time spent in barriers, and how each barrier ranks against the
//! fastest one on each grid.

use std::collections::BTreeMap;

use gsync::Barrier;

use crate::model::{Experiment, Run, Status, Workload};
use crate::paper::{self, PaperBand};
use crate::stats::{mean, relative_change, Summary};

/// One configuration: experiment, workload, grid and barrier.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Key {
    /// The experiment.
    pub experiment: Experiment,
    /// The workload.
    pub workload: Workload,
    /// Threads per block.
    pub threads: u32,
    /// Blocks.
    pub blocks: u32,
    /// The barrier, as `Display` writes it (so that keys order and compare).
    pub barrier: String,
}

/// Runs of one configuration by status, warm-ups included.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Verified runs.
    pub ok: usize,
    /// Runs whose output differed from the CPU reference.
    pub wrong: usize,
    /// Refused configurations.
    pub refused: usize,
    /// Failed runs.
    pub error: usize,
}

/// What the runs of one configuration add up to.
#[derive(Clone, Debug, PartialEq)]
pub struct Stats {
    /// The barrier.
    pub barrier: Barrier,
    /// Applications: kernel time per run, µs. Empty phases: cost of one phase
    /// boundary, (t(2P) − t(P)) / P per repetition, µs. Warm-ups excluded.
    pub summary: Option<Summary>,
    /// `grid_sync()`s of a launch (empty phases: P).
    pub phases: u32,
    /// The problem in words.
    pub problem: String,
    /// ILBS's group count as launched.
    pub groups: Option<u32>,
    /// Runs by status.
    pub counts: Counts,
    /// The first reason a run was wrong, refused or failed.
    pub detail: Option<String>,
}

impl Stats {
    /// The median, if any run was verified and timed.
    pub fn median(&self) -> Option<f64> {
        self.summary.map(|s| s.median)
    }

    /// Whether the configuration was refused and never ran.
    pub fn refused(&self) -> bool {
        self.counts.refused > 0 && self.counts.ok == 0
    }
}

/// Every configuration's summary.
#[derive(Clone, Debug, Default)]
pub struct Dataset {
    cells: BTreeMap<Key, Stats>,
    /// Rows in the CSV.
    pub rows: usize,
    /// Rows by status, over all configurations.
    pub totals: Counts,
    /// Verified, timed (non-warm-up) rows.
    pub timed_rows: usize,
    /// The rows that were wrong or failed, for the report.
    pub failures: Vec<Run>,
}

impl Dataset {
    /// Groups `runs` by configuration and summarizes each.
    pub fn from_runs(runs: &[Run]) -> Dataset {
        let mut groups: BTreeMap<Key, Vec<&Run>> = BTreeMap::new();
        let mut data = Dataset { rows: runs.len(), ..Dataset::default() };
        for run in runs {
            let key = Key {
                experiment: run.experiment,
                workload: run.workload,
                threads: run.threads,
                blocks: run.blocks,
                barrier: run.barrier.to_string(),
            };
            groups.entry(key).or_default().push(run);
            count(&mut data.totals, run.status);
            if run.timed_us().is_some() {
                data.timed_rows += 1;
            }
            if matches!(run.status, Status::Wrong | Status::Error) {
                data.failures.push(run.clone());
            }
        }
        for (key, runs) in groups {
            let stats = summarize(key.workload, &runs);
            data.cells.insert(key, stats);
        }
        data
    }

    /// The summary of one configuration.
    pub fn get(&self, e: Experiment, w: Workload, threads: u32, blocks: u32, barrier: Barrier) -> Option<&Stats> {
        let key = Key { experiment: e, workload: w, threads, blocks, barrier: barrier.to_string() };
        self.cells.get(&key)
    }

    /// The median of one configuration.
    pub fn median(&self, e: Experiment, w: Workload, threads: u32, blocks: u32, barrier: Barrier) -> Option<f64> {
        self.get(e, w, threads, blocks, barrier).and_then(Stats::median)
    }

    /// Every configuration of an experiment and workload at a block size, by grid.
    pub fn cells(&self, e: Experiment, w: Workload, threads: u32) -> impl Iterator<Item = (&Key, &Stats)> {
        self.cells.iter().filter(move |(k, _)| k.experiment == e && k.workload == w && k.threads == threads)
    }

    /// All configurations.
    pub fn all(&self) -> impl Iterator<Item = (&Key, &Stats)> {
        self.cells.iter()
    }

    /// The grids measured, ascending.
    pub fn grids(&self, e: Experiment, w: Workload, threads: u32) -> Vec<u32> {
        let mut grids: Vec<u32> = self.cells(e, w, threads).map(|(k, _)| k.blocks).collect();
        grids.dedup();
        grids
    }

    /// The barriers measured, in the report's order.
    pub fn barriers(&self, e: Experiment, w: Workload, threads: u32) -> Vec<Barrier> {
        let mut barriers: Vec<Barrier> = Vec::new();
        for (_, stats) in self.cells(e, w, threads) {
            if !barriers.contains(&stats.barrier) {
                barriers.push(stats.barrier);
            }
        }
        barriers.sort_by_key(|&b| barrier_order(b));
        barriers
    }

    /// The block sizes an experiment used, ascending.
    pub fn block_sizes(&self, e: Experiment) -> Vec<u32> {
        let mut sizes: Vec<u32> = self.cells.keys().filter(|k| k.experiment == e).map(|k| k.threads).collect();
        sizes.sort_unstable();
        sizes.dedup();
        sizes
    }

    /// The workloads an experiment ran.
    pub fn workloads(&self, e: Experiment) -> Vec<Workload> {
        Workload::ALL.into_iter().filter(|&w| self.cells.keys().any(|k| k.experiment == e && k.workload == w)).collect()
    }

    /// Whether anything of an experiment was recorded.
    pub fn has(&self, e: Experiment) -> bool {
        self.cells.keys().any(|k| k.experiment == e)
    }
}

/// Tables and legends list barriers in this order; ILBS with explicit groups by count.
pub fn barrier_order(barrier: Barrier) -> (u32, u32) {
    match barrier {
        Barrier::Cooperative => (0, 0),
        Barrier::Lbs => (1, 0),
        Barrier::Ilbs { groups: Some(g) } if g == paper::ILBS_GROUPS => (2, 0),
        Barrier::Ilbs { groups: None } => (3, 0),
        Barrier::Lfs => (4, 0),
        Barrier::Ulfs => (5, 0),
        Barrier::MultiLaunch => (6, 0),
        Barrier::Relay => (7, 0),
        Barrier::Ilbs { groups: Some(g) } => (8, g),
        _ => (9, 0),
    }
}

fn count(counts: &mut Counts, status: Status) {
    match status {
        Status::Ok => counts.ok += 1,
        Status::Wrong => counts.wrong += 1,
        Status::Refused => counts.refused += 1,
        Status::Error => counts.error += 1,
    }
}

/// The summary of one configuration's runs.
fn summarize(workload: Workload, runs: &[&Run]) -> Stats {
    let mut counts = Counts::default();
    for run in runs {
        count(&mut counts, run.status);
    }
    let detail = runs.iter().find(|r| r.status != Status::Ok).map(|r| r.detail.clone());
    let phases = runs.iter().map(|r| r.phases).min().unwrap_or(0);
    let samples: Vec<f64> = if workload == Workload::EmptyPhases {
        boundary_costs(runs, phases)
    } else {
        runs.iter().filter_map(|r| r.timed_us()).collect()
    };
    Stats {
        barrier: runs[0].barrier,
        summary: Summary::of(&samples),
        phases,
        problem: runs[0].problem.clone(),
        groups: runs[0].groups,
        counts,
        detail,
    }
}

/// (t(2P) − t(P)) / P for each timed repetition that has both launches verified.
fn boundary_costs(runs: &[&Run], p: u32) -> Vec<f64> {
    let mut by_rep: BTreeMap<u32, (Option<f64>, Option<f64>)> = BTreeMap::new();
    for run in runs {
        let Some(time) = run.timed_us() else { continue };
        let entry = by_rep.entry(run.rep).or_default();
        if run.phases == p {
            entry.0 = Some(time);
        } else if run.phases == 2 * p {
            entry.1 = Some(time);
        }
    }
    by_rep.values().filter_map(|&(short, long)| Some((long? - short?) / f64::from(p))).collect()
}

/// Our Table 4 or 5 row for one of the paper's bands.
#[derive(Clone, Debug, PartialEq)]
pub struct BandRow {
    /// The paper's row.
    pub paper: PaperBand,
    /// Grids of the band with both LBS and ILBS (6 groups) measured.
    pub grids: usize,
    /// Mean over the band's grids of the median LBS time, µs.
    pub t_lbs: Option<f64>,
    /// Mean over the band's grids of the median ILBS (6 groups) time, µs.
    pub t_ilbs: Option<f64>,
    /// Mean over the band's grids of the median ILBS (√N groups) time, µs.
    pub t_ilbs_sqrt: Option<f64>,
    /// t_LBS / t_ILBS with 6 groups, as the paper computes it.
    pub speedup: Option<f64>,
    /// t_LBS / t_ILBS with √N groups.
    pub speedup_sqrt: Option<f64>,
    /// The smallest and largest speedup (6 groups) of single grids in the band.
    pub per_grid: Option<(f64, f64)>,
}

/// Tables 4 and 5 from our runs: for each band, the mean of the per-grid medians.
pub fn band_rows(data: &Dataset, workload: Workload) -> Vec<BandRow> {
    let Some(table) = paper::table(workload) else { return Vec::new() };
    let b = paper::BLOCK_SIZE;
    let median = |blocks: u32, barrier: Barrier| data.median(Experiment::Paper, workload, b, blocks, barrier);
    let six = Barrier::Ilbs { groups: Some(paper::ILBS_GROUPS) };
    let root = Barrier::Ilbs { groups: None };
    table
        .iter()
        .map(|&band| {
            let paired: Vec<(f64, f64)> =
                (band.first..=band.last).filter_map(|n| Some((median(n, Barrier::Lbs)?, median(n, six)?))).collect();
            let rooted: Vec<(f64, f64)> =
                (band.first..=band.last).filter_map(|n| Some((median(n, Barrier::Lbs)?, median(n, root)?))).collect();
            let t_lbs = mean(&paired.iter().map(|p| p.0).collect::<Vec<_>>());
            let t_ilbs = mean(&paired.iter().map(|p| p.1).collect::<Vec<_>>());
            let t_lbs_rooted = mean(&rooted.iter().map(|p| p.0).collect::<Vec<_>>());
            let t_ilbs_sqrt = mean(&rooted.iter().map(|p| p.1).collect::<Vec<_>>());
            let ratios: Vec<f64> = paired.iter().map(|(l, i)| l / i).collect();
            let per_grid = Summary::of(&ratios).map(|s| (s.min, s.max));
            BandRow {
                paper: band,
                grids: paired.len(),
                t_lbs,
                t_ilbs,
                t_ilbs_sqrt,
                speedup: t_lbs.zip(t_ilbs).map(|(l, i)| l / i),
                speedup_sqrt: t_lbs_rooted.zip(t_ilbs_sqrt).map(|(l, i)| l / i),
                per_grid,
            }
        })
        .collect()
}

/// ULFS just past the block size against LFS at the block size.
#[derive(Clone, Debug, PartialEq)]
pub struct Jump {
    /// The block size B.
    pub block_size: u32,
    /// LFS on B blocks.
    pub lfs_below: Summary,
    /// ULFS on B blocks (the same as LFS there, by construction).
    pub ulfs_below: Option<Summary>,
    /// ULFS on B + 1 blocks.
    pub ulfs_at: Summary,
    /// t_ULFS(B + 1) / t_LFS(B) − 1, from the medians.
    pub rise: f64,
    /// Whether every ULFS(B + 1) run took longer than every LFS(B) run.
    pub disjoint: bool,
    /// LBS(B + 1) / LBS(B) − 1: what one more block costs a barrier without a tree.
    pub control_rise: Option<f64>,
}

impl Jump {
    /// Whether the rise counts as a jump: large enough, every run slower, and larger than
    /// the control's rise by at least `min` (all as fractions).
    pub fn is_significant(&self, min: f64) -> bool {
        self.rise >= min && self.disjoint && self.control_rise.is_none_or(|c| self.rise - c >= min)
    }
}

/// The jump from LFS on B blocks to ULFS on B + 1 (the paper's 33 vs 32).
pub fn ulfs_jump(data: &Dataset, experiment: Experiment, workload: Workload, block_size: u32) -> Option<Jump> {
    let summary = |blocks, barrier| data.get(experiment, workload, block_size, blocks, barrier)?.summary;
    let lfs_below = summary(block_size, Barrier::Lfs)?;
    let ulfs_at = summary(block_size + 1, Barrier::Ulfs)?;
    let control_rise = summary(block_size, Barrier::Lbs)
        .zip(summary(block_size + 1, Barrier::Lbs))
        .map(|(below, at)| relative_change(at.median, below.median));
    Some(Jump {
        block_size,
        lfs_below,
        ulfs_below: summary(block_size, Barrier::Ulfs),
        ulfs_at,
        rise: relative_change(ulfs_at.median, lfs_below.median),
        disjoint: lfs_below.entirely_below(&ulfs_at),
        control_rise,
    })
}

/// ULFS (and a control barrier) around one multiple of the block size.
#[derive(Clone, Debug, PartialEq)]
pub struct Crossing {
    /// k · B.
    pub multiple: u32,
    /// ULFS on k·B − 1 blocks.
    pub before: Option<Summary>,
    /// ULFS on k·B blocks.
    pub at: Summary,
    /// ULFS on k·B + 1 blocks.
    pub after: Summary,
    /// t(k·B + 1) / t(k·B) − 1: the step across the multiple.
    pub step: f64,
    /// t(k·B) / t(k·B − 1) − 1: the step just before, for comparison.
    pub step_before: Option<f64>,
    /// Whether every run on k·B + 1 blocks took longer than every run on k·B.
    pub disjoint: bool,
    /// The control barrier's step across the same multiple.
    pub control_step: Option<f64>,
}

/// ULFS's steps across each measured multiple of the block size (experiment `multiples`),
/// with `control` (LBS) as a barrier without a tree.
pub fn crossings(data: &Dataset, workload: Workload, block_size: u32, control: Barrier) -> Vec<Crossing> {
    let e = Experiment::Multiples;
    let summary = |blocks: u32, barrier| data.get(e, workload, block_size, blocks, barrier).and_then(|s| s.summary);
    let mut out = Vec::new();
    for multiple in data.grids(e, workload, block_size).into_iter().filter(|n| n % block_size == 0) {
        let (Some(at), Some(after)) = (summary(multiple, Barrier::Ulfs), summary(multiple + 1, Barrier::Ulfs)) else {
            continue;
        };
        let before = summary(multiple - 1, Barrier::Ulfs);
        let control_step = summary(multiple, control)
            .zip(summary(multiple + 1, control))
            .map(|(a, b)| relative_change(b.median, a.median));
        out.push(Crossing {
            multiple,
            before,
            at,
            after,
            step: relative_change(after.median, at.median),
            step_before: before.map(|b| relative_change(at.median, b.median)),
            disjoint: at.entirely_below(&after),
            control_step,
        });
    }
    out
}

/// ILBS's time against its group count on one grid.
#[derive(Clone, Debug, PartialEq)]
pub struct GroupSweep {
    /// N.
    pub blocks: u32,
    /// (groups, summary), by group count.
    pub points: Vec<(u32, Summary)>,
    /// The group count with the lowest median.
    pub best: u32,
    /// Its median.
    pub best_median: f64,
    /// round(√N).
    pub root: u32,
    /// The median at round(√N).
    pub root_summary: Option<Summary>,
    /// Largest median / smallest median − 1: how much the group count matters at all.
    pub range: f64,
}

impl GroupSweep {
    /// How much slower round(√N) groups are than the best count, as a fraction.
    pub fn root_excess(&self) -> Option<f64> {
        self.root_summary.map(|s| relative_change(s.median, self.best_median))
    }
}

/// The group sweeps of a workload, one per grid.
pub fn group_sweeps(data: &Dataset, workload: Workload) -> Vec<GroupSweep> {
    let e = Experiment::Groups;
    let b = paper::BLOCK_SIZE;
    let mut sweeps = Vec::new();
    for blocks in data.grids(e, workload, b) {
        let mut points: Vec<(u32, Summary)> = data
            .cells(e, workload, b)
            .filter(|(k, _)| k.blocks == blocks)
            .filter_map(|(_, s)| Some((s.groups?, s.summary?)))
            .collect();
        points.sort_by_key(|p| p.0);
        let Some(&(best, best_summary)) = points.iter().min_by(|x, y| x.1.median.total_cmp(&y.1.median)) else {
            continue;
        };
        let worst = points.iter().map(|p| p.1.median).fold(f64::MIN, f64::max);
        let root = Barrier::default_ilbs_groups(blocks);
        let root_summary = points.iter().find(|p| p.0 == root).map(|p| p.1);
        sweeps.push(GroupSweep {
            blocks,
            best,
            best_median: best_summary.median,
            root,
            root_summary,
            range: relative_change(worst, best_summary.median),
            points,
        });
    }
    sweeps
}

/// Barrier time against compute time for one configuration of an application.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Share {
    /// Cost of one phase boundary under this barrier on this grid (empty phases), µs.
    pub cost_us: f64,
    /// Phase boundaries of one application run.
    pub phases: u32,
    /// The application's median time, µs.
    pub total_us: f64,
}

impl Share {
    /// Time in barriers: phases × cost per boundary, µs.
    pub fn sync_us(&self) -> f64 {
        f64::from(self.phases) * self.cost_us
    }

    /// The rest: the application's time less its barriers, µs.
    pub fn compute_us(&self) -> f64 {
        self.total_us - self.sync_us()
    }

    /// The fraction of the application's time spent in barriers.
    pub fn fraction(&self) -> f64 {
        self.sync_us() / self.total_us
    }
}

/// The barrier share of an application run, from the same experiment's empty-phases
/// cost on the same grid.
pub fn share(data: &Dataset, e: Experiment, w: Workload, threads: u32, blocks: u32, barrier: Barrier) -> Option<Share> {
    let app = data.get(e, w, threads, blocks, barrier)?;
    let cost_us = data.median(e, Workload::EmptyPhases, threads, blocks, barrier)?;
    Some(Share { cost_us, phases: app.phases, total_us: app.median()? })
}

/// Mean of `f` over the grids of a band where it has a value.
pub fn band_mean(band: &PaperBand, f: impl Fn(u32) -> Option<f64>) -> Option<f64> {
    mean(&(band.first..=band.last).filter_map(f).collect::<Vec<_>>())
}

/// How often barrier `a` beat barrier `b` in the paper's setting: (grids where a's
/// median is lower, grids where both were measured, the grids where a lost).
pub fn head_to_head(data: &Dataset, workload: Workload, a: Barrier, b: Barrier) -> (usize, usize, Vec<u32>) {
    let (mut wins, mut total, mut losses) = (0, 0, Vec::new());
    for blocks in data.grids(Experiment::Paper, workload, paper::BLOCK_SIZE) {
        let median = |barrier| data.median(Experiment::Paper, workload, paper::BLOCK_SIZE, blocks, barrier);
        if let (Some(x), Some(y)) = (median(a), median(b)) {
            total += 1;
            if x < y {
                wins += 1;
            } else {
                losses.push(blocks);
            }
        }
    }
    (wins, total, losses)
}

/// What the runs show about LFS's block limit and ULFS lifting it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LfsLimit {
    /// LFS configurations with N ≤ B that ran and verified.
    pub lfs_ok_within: usize,
    /// LFS configurations with N ≤ B that did not.
    pub lfs_failed_within: usize,
    /// LFS configurations with N > B that were refused.
    pub lfs_refused_beyond: usize,
    /// LFS configurations with N > B that ran anyway.
    pub lfs_ran_beyond: usize,
    /// ULFS configurations with N > B that ran and verified.
    pub ulfs_ok_beyond: usize,
    /// ULFS configurations with N > B that did not.
    pub ulfs_failed_beyond: usize,
    /// The largest ULFS grid that ran, as (blocks, threads).
    pub ulfs_largest: Option<(u32, u32)>,
}

/// Counts LFS and ULFS configurations within and beyond the block size, over every experiment.
pub fn lfs_limit(data: &Dataset) -> LfsLimit {
    let mut limit = LfsLimit::default();
    for (key, stats) in data.all() {
        let beyond = key.blocks > key.threads;
        let fine = stats.counts.ok > 0 && stats.counts.wrong == 0 && stats.counts.error == 0;
        match (stats.barrier, beyond) {
            (Barrier::Lfs, false) if fine => limit.lfs_ok_within += 1,
            (Barrier::Lfs, false) => limit.lfs_failed_within += 1,
            (Barrier::Lfs, true) if stats.refused() => limit.lfs_refused_beyond += 1,
            (Barrier::Lfs, true) => limit.lfs_ran_beyond += 1,
            (Barrier::Ulfs, true) if fine => {
                limit.ulfs_ok_beyond += 1;
                if limit.ulfs_largest.is_none_or(|(n, _)| key.blocks > n) {
                    limit.ulfs_largest = Some((key.blocks, key.threads));
                }
            }
            (Barrier::Ulfs, true) => limit.ulfs_failed_beyond += 1,
            _ => {}
        }
    }
    limit
}

/// How one barrier fared against the fastest barrier of each grid in one setting.
#[derive(Clone, Debug, PartialEq)]
pub struct Standing {
    /// The barrier.
    pub barrier: Barrier,
    /// Grids of the setting where it was timed.
    pub grids: usize,
    /// Grids where its median was the lowest, or within the tie margin of it.
    pub wins: usize,
    /// Geometric mean over its grids of its median / the grid's lowest median (1 = always the fastest).
    pub mean_slowdown: f64,
    /// Its largest median / lowest median, and the grid where that happened.
    pub worst: (f64, u32),
}

/// Every barrier's standing over the grids of one experiment, workload and block size.
#[derive(Clone, Debug, PartialEq)]
pub struct Ranking {
    /// The experiment.
    pub experiment: Experiment,
    /// The workload.
    pub workload: Workload,
    /// Threads per block.
    pub threads: u32,
    /// The grids compared (at least one barrier timed, with a positive median), ascending.
    pub grids: Vec<u32>,
    /// One per barrier timed on at least one of those grids, in the order they were asked for.
    pub standings: Vec<Standing>,
}

impl Ranking {
    /// The standing of `barrier`, if it was timed on any grid.
    pub fn standing(&self, barrier: Barrier) -> Option<&Standing> {
        self.standings.iter().find(|s| s.barrier == barrier)
    }

    /// The standings of the barriers timed on every grid compared.
    pub fn everywhere(&self) -> impl Iterator<Item = &Standing> {
        self.standings.iter().filter(|s| s.grids == self.grids.len())
    }
}

/// A barrier's running totals while grids are ranked.
#[derive(Clone, Copy, Debug, Default)]
struct Tally {
    grids: usize,
    wins: usize,
    log_sum: f64,
    worst: Option<(f64, u32)>,
}

impl Tally {
    /// Adds one grid where the barrier's median is `slowdown` times the lowest.
    fn add(&mut self, blocks: u32, slowdown: f64, tie: f64) {
        self.grids += 1;
        self.wins += usize::from(slowdown <= 1.0 + tie);
        self.log_sum += slowdown.ln();
        if self.worst.is_none_or(|(w, _)| slowdown > w) {
            self.worst = Some((slowdown, blocks));
        }
    }

    /// The totals as a standing; `None` when the barrier ran on no grid.
    fn standing(&self, barrier: Barrier) -> Option<Standing> {
        Some(Standing {
            barrier,
            grids: self.grids,
            wins: self.wins,
            mean_slowdown: (self.log_sum / self.grids as f64).exp(),
            worst: self.worst?,
        })
    }
}

/// Ranks `barriers` on every grid of a setting by their medians: on each grid the lowest median
/// wins, and so does every median within `tie` (a fraction) of it. Grids where no barrier was
/// timed, or whose lowest median is not positive, are left out; `None` when no grid is left.
pub fn ranking(
    data: &Dataset,
    e: Experiment,
    w: Workload,
    threads: u32,
    barriers: &[Barrier],
    tie: f64,
) -> Option<Ranking> {
    let mut tallies = vec![Tally::default(); barriers.len()];
    let mut grids = Vec::new();
    for blocks in data.grids(e, w, threads) {
        let medians: Vec<Option<f64>> = barriers.iter().map(|&b| data.median(e, w, threads, blocks, b)).collect();
        let Some(best) = medians.iter().flatten().copied().reduce(f64::min).filter(|&best| best > 0.0) else {
            continue;
        };
        grids.push(blocks);
        for (tally, median) in tallies.iter_mut().zip(&medians) {
            if let Some(median) = median {
                tally.add(blocks, median / best, tie);
            }
        }
    }
    if grids.is_empty() {
        return None;
    }
    let standings = barriers.iter().zip(&tallies).filter_map(|(&b, tally)| tally.standing(b)).collect();
    Some(Ranking { experiment: e, workload: w, threads, grids, standings })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A run of the paper's setting with a given time.
    pub(crate) fn run(e: Experiment, w: Workload, blocks: u32, barrier: Barrier, rep: u32, time: f64) -> Run {
        Run {
            experiment: e,
            workload: w,
            problem: "test".into(),
            phases: 10,
            threads: 32,
            blocks,
            barrier,
            groups: crate::model::resolved_groups(barrier, blocks),
            rep,
            status: Status::Ok,
            time_us: Some(time),
            detail: String::new(),
        }
    }

    #[test]
    fn warm_ups_are_excluded_and_failures_kept_for_the_report() {
        let e = Experiment::Paper;
        let w = Workload::Bitonic;
        let mut runs = vec![
            run(e, w, 7, Barrier::Lbs, 0, 1000.0),
            run(e, w, 7, Barrier::Lbs, 1, 10.0),
            run(e, w, 7, Barrier::Lbs, 2, 12.0),
            run(e, w, 7, Barrier::Lbs, 3, 11.0),
        ];
        runs.push(Run {
            status: Status::Wrong,
            time_us: None,
            detail: "bad".into(),
            ..run(e, w, 7, Barrier::Lbs, 4, 0.0)
        });
        let data = Dataset::from_runs(&runs);
        let stats = data.get(e, w, 32, 7, Barrier::Lbs).expect("measured");
        let summary = stats.summary.expect("timed");
        assert_eq!((summary.n, summary.median, summary.max), (3, 11.0, 12.0));
        assert_eq!(stats.counts, Counts { ok: 4, wrong: 1, refused: 0, error: 0 });
        assert_eq!(stats.detail.as_deref(), Some("bad"));
        assert_eq!((data.rows, data.timed_rows, data.failures.len()), (5, 3, 1));
    }

    #[test]
    fn empty_phases_yield_the_cost_of_one_boundary_per_repetition() {
        let e = Experiment::Paper;
        let w = Workload::EmptyPhases;
        let mut runs = Vec::new();
        for (rep, short, long) in [(0, 900.0, 2000.0), (1, 100.0, 150.0), (2, 110.0, 170.0), (3, 100.0, 140.0)] {
            runs.push(Run { phases: 10, ..run(e, w, 8, Barrier::Ulfs, rep, short) });
            runs.push(Run { phases: 20, ..run(e, w, 8, Barrier::Ulfs, rep, long) });
        }
        let data = Dataset::from_runs(&runs);
        let stats = data.get(e, w, 32, 8, Barrier::Ulfs).expect("measured");
        let summary = stats.summary.expect("costs");
        assert_eq!((summary.n, summary.min, summary.median, summary.max), (3, 4.0, 5.0, 6.0));
        assert_eq!(stats.phases, 10);
    }

    /// The paper's setting where ILBS (6 groups) is `factor` times faster than LBS everywhere.
    pub(crate) fn uniform_speedup(w: Workload, factor: f64) -> Vec<Run> {
        let mut runs = Vec::new();
        for blocks in paper::blocks() {
            for rep in 1..=3 {
                let lbs = 100.0 + f64::from(blocks) + f64::from(rep);
                runs.push(run(Experiment::Paper, w, blocks, Barrier::Lbs, rep, lbs));
                runs.push(run(Experiment::Paper, w, blocks, Barrier::Ilbs { groups: Some(6) }, rep, lbs / factor));
            }
        }
        runs
    }

    #[test]
    fn bands_average_the_per_grid_medians_as_the_paper_does() {
        let data = Dataset::from_runs(&uniform_speedup(Workload::SmithWaterman, 2.0));
        let rows = band_rows(&data, Workload::SmithWaterman);
        assert_eq!(rows.len(), 6);
        assert_eq!(rows[0].grids, 9);
        // Band 7–15: LBS medians 100 + N + 2, mean over N = 7…15 is 113.
        assert!((rows[0].t_lbs.expect("lbs") - 113.0).abs() < 1e-9);
        assert!((rows[0].speedup.expect("speedup") - 2.0).abs() < 1e-9);
        assert_eq!(rows[0].speedup_sqrt, None, "√N was not measured");
        let (low, high) = rows[5].per_grid.expect("per grid");
        assert!((low - 2.0).abs() < 1e-9 && (high - 2.0).abs() < 1e-9);
        assert!(band_rows(&data, Workload::EmptyPhases).is_empty());
    }

    #[test]
    fn the_jump_compares_ulfs_past_the_block_size_with_lfs_at_it() {
        let e = Experiment::Paper;
        let w = Workload::Bitonic;
        let mut runs = Vec::new();
        for rep in 1..=3 {
            runs.push(run(e, w, 32, Barrier::Lfs, rep, 100.0 + f64::from(rep)));
            runs.push(run(e, w, 33, Barrier::Ulfs, rep, 140.0 + f64::from(rep)));
        }
        let jump = ulfs_jump(&Dataset::from_runs(&runs), e, w, 32).expect("both measured");
        // LBS rising as much from 32 to 33 blocks would make the rise the grid's, not ULFS's.
        let mut with_control = runs.clone();
        for rep in 1..=3 {
            with_control.push(run(e, w, 32, Barrier::Lbs, rep, 100.0));
            with_control.push(run(e, w, 33, Barrier::Lbs, rep, 139.0));
        }
        let controlled = ulfs_jump(&Dataset::from_runs(&with_control), e, w, 32).expect("measured");
        assert!((controlled.control_rise.expect("lbs measured") - 0.39).abs() < 1e-9);
        assert!(!controlled.is_significant(0.02));
        assert!((jump.rise - (142.0 / 102.0 - 1.0)).abs() < 1e-12);
        assert!(jump.disjoint && jump.is_significant(0.02));
        assert_eq!((jump.ulfs_below, jump.control_rise), (None, None));
        assert_eq!(ulfs_jump(&Dataset::from_runs(&runs[..1]), e, w, 32), None);
    }

    #[test]
    fn group_sweeps_find_the_best_count_and_the_root() {
        let e = Experiment::Groups;
        let w = Workload::EmptyPhases;
        let mut runs = Vec::new();
        for g in 1..=9u32 {
            // A valley at 4 groups; √9 = 3 is 1 µs worse.
            let cost = 10.0 + f64::from(g.abs_diff(4));
            for rep in 0..=2 {
                runs.push(Run { phases: 10, ..run(e, w, 9, Barrier::Ilbs { groups: Some(g) }, rep, 0.0) });
                runs.push(Run { phases: 20, ..run(e, w, 9, Barrier::Ilbs { groups: Some(g) }, rep, 10.0 * cost) });
            }
        }
        let sweeps = group_sweeps(&Dataset::from_runs(&runs), w);
        assert_eq!(sweeps.len(), 1);
        let sweep = &sweeps[0];
        assert_eq!((sweep.blocks, sweep.best, sweep.root, sweep.points.len()), (9, 4, 3, 9));
        assert!((sweep.root_excess().expect("root measured") - 0.1).abs() < 1e-9);
        assert!((sweep.range - 0.5).abs() < 1e-9, "{}", sweep.range);
    }

    #[test]
    fn rankings_count_ties_for_both_and_skip_barriers_and_grids_without_times() {
        let (e, w) = (Experiment::Paper, Workload::Bitonic);
        let mut runs = Vec::new();
        // (blocks, LBS, cooperative, LFS): LFS runs on 7 blocks only and is refused on 8 and 9;
        // on 8 blocks cooperative is 0.5% slower than LBS, a tie; nothing ran on 10 blocks.
        for (blocks, lbs, cooperative, lfs) in
            [(7, 100.0, 120.0, Some(90.0)), (8, 100.0, 100.5, None), (9, 100.0, 80.0, None)]
        {
            for rep in 1..=3 {
                runs.push(run(e, w, blocks, Barrier::Lbs, rep, lbs));
                runs.push(run(e, w, blocks, Barrier::Cooperative, rep, cooperative));
                runs.push(run(e, w, blocks, Barrier::Ilbs { groups: Some(3) }, rep, 1.0));
                match lfs {
                    Some(time) => runs.push(run(e, w, blocks, Barrier::Lfs, rep, time)),
                    None => runs.push(Run {
                        status: Status::Refused,
                        time_us: None,
                        ..run(e, w, blocks, Barrier::Lfs, rep, 0.0)
                    }),
                }
            }
        }
        runs.push(Run { status: Status::Refused, time_us: None, ..run(e, w, 10, Barrier::Lfs, 1, 0.0) });
        let barriers = [Barrier::Cooperative, Barrier::Lbs, Barrier::Lfs, Barrier::MultiLaunch];
        let data = Dataset::from_runs(&runs);
        let r = ranking(&data, e, w, 32, &barriers, 0.01).expect("three grids");
        assert_eq!(r.grids, [7, 8, 9], "no barrier timed on 10 blocks; ilbs:3 is not compared");
        let names: Vec<Barrier> = r.standings.iter().map(|s| s.barrier).collect();
        assert_eq!(names, [Barrier::Cooperative, Barrier::Lbs, Barrier::Lfs], "multi-launch never ran");
        let lbs = r.standing(Barrier::Lbs).expect("lbs");
        assert_eq!((lbs.grids, lbs.wins, lbs.worst), (3, 1, (1.25, 9)), "ties on 8, loses on 7 and 9");
        assert!((lbs.mean_slowdown - (100.0f64 / 90.0 * 1.25).cbrt()).abs() < 1e-12);
        let cooperative = r.standing(Barrier::Cooperative).expect("cooperative");
        assert_eq!((cooperative.wins, cooperative.worst.1), (2, 7), "the tie on 8 and the win on 9");
        let lfs = r.standing(Barrier::Lfs).expect("lfs");
        assert_eq!((lfs.grids, lfs.wins, lfs.mean_slowdown), (1, 1, 1.0), "only the grid where it ran");
        let everywhere: Vec<Barrier> = r.everywhere().map(|s| s.barrier).collect();
        assert_eq!(everywhere, [Barrier::Cooperative, Barrier::Lbs]);
        let strict = ranking(&data, e, w, 32, &barriers, 0.001).expect("grids");
        assert_eq!(strict.standing(Barrier::Cooperative).map(|s| s.wins), Some(1), "0.5% is no tie within 0.1%");
        assert_eq!(ranking(&data, e, w, 256, &barriers, 0.01), None, "no grid of 256 threads");
        let zero: Vec<Run> = runs
            .iter()
            .filter(|r| r.blocks == 7)
            .map(|r| Run { time_us: r.time_us.map(|_| 0.0), ..r.clone() })
            .collect();
        assert_eq!(ranking(&Dataset::from_runs(&zero), e, w, 32, &barriers, 0.01), None, "no positive median");
    }

    #[test]
    fn lfs_limits_are_counted_within_and_beyond_the_block_size() {
        let e = Experiment::Paper;
        let w = Workload::EmptyPhases;
        let refused = Run {
            status: Status::Refused,
            time_us: None,
            detail: "at most 32".into(),
            ..run(e, w, 33, Barrier::Lfs, 0, 0.0)
        };
        let runs = vec![run(e, w, 32, Barrier::Lfs, 1, 5.0), refused, run(e, w, 40, Barrier::Ulfs, 1, 6.0)];
        let limit = lfs_limit(&Dataset::from_runs(&runs));
        assert_eq!((limit.lfs_ok_within, limit.lfs_refused_beyond, limit.lfs_ran_beyond), (1, 1, 0));
        assert_eq!((limit.ulfs_ok_beyond, limit.ulfs_largest), (1, Some((40, 32))));
    }
}
