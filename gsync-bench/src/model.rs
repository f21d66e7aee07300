//! The harness's vocabulary: which experiment, which workload, and one raw run.

use std::fmt;
use std::str::FromStr;

use gsync::Barrier;

/// A part of the replication, each answering its own question.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Experiment {
    /// The paper's setting: 32 threads, 7–60 blocks, every barrier (Tables 4–5, Figures 7–12).
    Paper,
    /// ILBS group counts at fixed grids: is √N optimal?
    Groups,
    /// ULFS around multiples of the block size: does its time jump there?
    Multiples,
    /// Beyond the paper: block sizes 32, 256, 1024 up to the co-resident grid.
    Extended,
}

impl Experiment {
    /// Every experiment, in the order they run.
    pub const ALL: [Experiment; 4] =
        [Experiment::Paper, Experiment::Groups, Experiment::Multiples, Experiment::Extended];

    /// The name used in the CSV and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Experiment::Paper => "paper",
            Experiment::Groups => "groups",
            Experiment::Multiples => "multiples",
            Experiment::Extended => "extended",
        }
    }
}

/// What a kernel run computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Workload {
    /// Bitonic sort of random `u32` keys (`gsync::kernels::bitonic`).
    Bitonic,
    /// Smith-Waterman local alignment of random proteins (`gsync::kernels::smith_waterman`).
    SmithWaterman,
    /// Nearly empty phases (`gsync::kernels::empty_phases`): the barrier alone.
    EmptyPhases,
}

impl Workload {
    /// Every workload.
    pub const ALL: [Workload; 3] = [Workload::Bitonic, Workload::SmithWaterman, Workload::EmptyPhases];

    /// The two applications of the paper.
    pub const APPS: [Workload; 2] = [Workload::SmithWaterman, Workload::Bitonic];

    /// The name used in the CSV and in file names.
    pub fn name(self) -> &'static str {
        match self {
            Workload::Bitonic => "bitonic",
            Workload::SmithWaterman => "smith-waterman",
            Workload::EmptyPhases => "empty-phases",
        }
    }

    /// The name used in prose and plot titles.
    pub fn title(self) -> &'static str {
        match self {
            Workload::Bitonic => "Bitonic sort",
            Workload::SmithWaterman => "Smith-Waterman",
            Workload::EmptyPhases => "Empty phases (barrier only)",
        }
    }

    /// A short name for file names.
    pub fn short(self) -> &'static str {
        match self {
            Workload::Bitonic => "bitonic",
            Workload::SmithWaterman => "sw",
            Workload::EmptyPhases => "empty",
        }
    }
}

/// Parses the names [`Experiment::name`] writes.
impl FromStr for Experiment {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Experiment::ALL
            .into_iter()
            .find(|e| e.name() == s)
            .ok_or_else(|| format!("unknown experiment `{s}` (expected paper, groups, multiples or extended)"))
    }
}

/// Parses the names [`Workload::name`] writes.
impl FromStr for Workload {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Workload::ALL
            .into_iter()
            .find(|w| w.name() == s)
            .ok_or_else(|| format!("unknown workload `{s}` (expected bitonic, smith-waterman or empty-phases)"))
    }
}

impl fmt::Display for Experiment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Display for Workload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Status {
    /// It ran and its output matched the CPU reference: the only status with a time.
    Ok,
    /// It ran but its output differs from the CPU reference; never timed.
    Wrong,
    /// The runtime (or the barrier's own limit) refused the configuration before launching.
    Refused,
    /// It failed while running, e.g. a barrier timeout.
    Error,
}

impl Status {
    /// The name used in the CSV.
    pub fn name(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Wrong => "wrong",
            Status::Refused => "refused",
            Status::Error => "error",
        }
    }
}

impl FromStr for Status {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        [Status::Ok, Status::Wrong, Status::Refused, Status::Error]
            .into_iter()
            .find(|status| status.name() == s)
            .ok_or_else(|| format!("unknown status `{s}` (expected ok, wrong, refused or error)"))
    }
}

/// One launch (or one refused configuration): a row of `runs.csv`.
#[derive(Clone, Debug, PartialEq)]
pub struct Run {
    /// The experiment it belongs to.
    pub experiment: Experiment,
    /// What it computed.
    pub workload: Workload,
    /// The problem, e.g. `n=16384 tile=64`.
    pub problem: String,
    /// The `grid_sync()`s the launch crosses.
    pub phases: u32,
    /// Threads per block.
    pub threads: u32,
    /// Blocks in the grid.
    pub blocks: u32,
    /// The barrier (ILBS without a group count means round(√N) groups).
    pub barrier: Barrier,
    /// ILBS's group count as launched; `None` for other barriers.
    pub groups: Option<u32>,
    /// Repetition: 0 is the warm-up, which is verified but never used in statistics.
    pub rep: u32,
    /// The run's outcome.
    pub status: Status,
    /// The kernel's CUDA-event time in µs; only for [`Status::Ok`].
    pub time_us: Option<f64>,
    /// Why it was wrong, refused or failed; empty when ok.
    pub detail: String,
}

impl Run {
    /// Whether this run is the warm-up of its configuration.
    pub fn is_warmup(&self) -> bool {
        self.rep == 0
    }

    /// The time of a verified, timed (non-warm-up) run.
    pub fn timed_us(&self) -> Option<f64> {
        match self.status {
            Status::Ok if !self.is_warmup() => self.time_us,
            _ => None,
        }
    }
}

/// ILBS's group count for a barrier on `blocks` blocks, as the runtime resolves it:
/// the given count, or round(√N) for `Ilbs { groups: None }`.
pub fn resolved_groups(barrier: Barrier, blocks: u32) -> Option<u32> {
    match barrier {
        Barrier::Ilbs { groups: Some(groups) } => Some(groups),
        Barrier::Ilbs { groups: None } => Some(Barrier::default_ilbs_groups(blocks)),
        _ => None,
    }
}

/// A barrier's name in tables and legends: ILBS's default reads "ilbs:√N".
pub fn barrier_label(barrier: Barrier) -> String {
    match barrier {
        Barrier::Ilbs { groups: None } => "ilbs:√N".to_owned(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back() {
        for e in Experiment::ALL {
            assert_eq!(e.name().parse::<Experiment>(), Ok(e));
        }
        for w in Workload::ALL {
            assert_eq!(w.name().parse::<Workload>(), Ok(w));
        }
        for s in [Status::Ok, Status::Wrong, Status::Refused, Status::Error] {
            assert_eq!(s.name().parse::<Status>(), Ok(s));
        }
        assert!("sorting".parse::<Workload>().is_err());
    }

    #[test]
    fn only_verified_repetitions_after_the_warm_up_have_a_time() {
        let mut run = Run {
            experiment: Experiment::Paper,
            workload: Workload::Bitonic,
            problem: "n=16".into(),
            phases: 3,
            threads: 32,
            blocks: 7,
            barrier: Barrier::Lbs,
            groups: None,
            rep: 0,
            status: Status::Ok,
            time_us: Some(5.0),
            detail: String::new(),
        };
        assert_eq!(run.timed_us(), None, "warm-up");
        run.rep = 1;
        assert_eq!(run.timed_us(), Some(5.0));
        run.status = Status::Wrong;
        assert_eq!(run.timed_us(), None, "a wrong answer is never timed");
    }

    #[test]
    fn ilbs_groups_default_to_the_rounded_square_root() {
        assert_eq!(resolved_groups(Barrier::Ilbs { groups: None }, 36), Some(6));
        assert_eq!(resolved_groups(Barrier::Ilbs { groups: None }, 60), Some(8));
        assert_eq!(resolved_groups(Barrier::Ilbs { groups: None }, 7), Some(3));
        assert_eq!(resolved_groups(Barrier::Ilbs { groups: Some(6) }, 60), Some(6));
        assert_eq!(resolved_groups(Barrier::Lbs, 60), None);
        assert_eq!(resolved_groups(Barrier::Ilbs { groups: None }, 1), Some(1));
        assert_eq!(barrier_label(Barrier::Ilbs { groups: None }), "ilbs:√N");
        assert_eq!(barrier_label(Barrier::Ilbs { groups: Some(6) }), "ilbs:6");
    }
}
