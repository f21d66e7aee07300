//! Running the plan: for each cell, a verified warm-up per barrier, then the
//! repetitions interleaved across barriers, every launch checked against the
//! CPU reference and recorded as a row.

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::time::Duration;

use gsync::{Barrier, Error, Gpu, Launch};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::error::Result;
use crate::machine::first_line;
use crate::model::{resolved_groups, Experiment, Run, Status};
use crate::plan::Cell;
use crate::workloads::{Outcome, Problem, ProblemSpec};

/// The longest `detail` kept in a row: error messages can carry a whole kernel's source.
const DETAIL_LIMIT: usize = 300;

/// After this many watchdog timeouts of one barrier at one block size, the barrier is not
/// launched again at that block size: each timeout costs the watchdog's 5 s, and a run of
/// the whole replication must stay bounded.
pub const TIMEOUT_LIMIT: u32 = 2;

/// Watchdog timeouts so far, by barrier and block size.
type Timeouts = HashMap<(Barrier, u32), u32>;

/// How one run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ended {
    /// It ran (verified or wrong); its rows are recorded.
    Ran,
    /// It was refused or failed.
    Failed,
    /// A barrier's watchdog stopped it.
    TimedOut,
}

/// The largest grid every device barrier can launch of `spec` at `threads`
/// threads per block, bounded by `cap`.
/// A barrier whose kernel cannot be built here (e.g. cooperative groups without the CUDA
/// headers) does not count: its runs are recorded as failures. Fails only when none can.
pub fn coresident_limit(gpu: &Gpu, spec: ProblemSpec, threads: u32, cap: Option<u32>) -> Result<u32> {
    let mut limit: Option<u32> = None;
    let mut first_error = None;
    for barrier in [Barrier::Cooperative, Barrier::Lbs, Barrier::Ilbs { groups: None }, Barrier::Ulfs] {
        let launch = Launch::new().threads(threads).barrier(barrier);
        match spec.max_coresident(gpu, &launch) {
            Ok(max) => limit = Some(limit.map_or(max, |l| l.min(max))),
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    match (limit, first_error) {
        (Some(max), _) => Ok(cap.map_or(max, |cap| cap.min(max))),
        (None, Some(e)) => Err(e.into()),
        (None, None) => Ok(cap.unwrap_or(u32::MAX)),
    }
}

/// Why a barrier cannot serve a grid by its own definition, before anything is launched
/// (the CUDA launcher refuses these too; the emulator, which has one barrier for all, does not).
pub fn barrier_refusal(barrier: Barrier, threads: u32, blocks: u32) -> Option<String> {
    if let Some(max) = (barrier.descriptor().max_blocks)(threads).filter(|&max| blocks > max) {
        return Some(format!(
            "barrier `{barrier}` supports at most {max} blocks at {threads} threads per block \
             (its master block gathers with one thread per block)"
        ));
    }
    match resolved_groups(barrier, blocks) {
        Some(groups) if groups == 0 || groups > blocks => {
            Some(format!("barrier `{barrier}` needs 1 to {blocks} groups on {blocks} blocks"))
        }
        _ => None,
    }
}

/// How a failed launch is recorded: a configuration the runtime would not launch is
/// `refused`; anything that went wrong while running is an `error`.
pub fn classify(error: &Error) -> Status {
    match error {
        Error::GridTooLarge { .. }
        | Error::BarrierBlockLimit { .. }
        | Error::InvalidBarrier { .. }
        | Error::CooperativeLaunchUnsupported { .. }
        | Error::CannotSplit { .. }
        | Error::InvalidBlockSize { .. } => Status::Refused,
        _ => Status::Error,
    }
}

/// Runs every cell on `gpu` with `reps` repetitions each; inputs come from `seed`.
pub fn execute(gpu: &Gpu, cells: &[Cell], reps: u32, seed: u64, progress: bool) -> Result<Vec<Run>> {
    let total: u64 = cells.iter().map(|c| c.launches(reps)).sum();
    let bar = progress_bar(total, progress);
    let mut problems: HashMap<ProblemSpec, Problem> = HashMap::new();
    let mut runs = Vec::new();
    let mut stage: Option<(Experiment, ProblemSpec, u32)> = None;
    let mut timeouts = Timeouts::new();
    for cell in cells {
        if stage != Some((cell.experiment, cell.spec, cell.threads)) {
            stage = Some((cell.experiment, cell.spec, cell.threads));
            let line = format!(
                "{}: {} {} at {} threads per block",
                cell.experiment,
                cell.spec.workload(),
                cell.spec.describe(),
                cell.threads
            );
            // A hidden bar (no terminal, or --no-progress) prints nothing itself.
            if bar.is_hidden() {
                eprintln!("{line}");
            } else {
                bar.println(line);
            }
        }
        let problem = match problems.entry(cell.spec) {
            Entry::Occupied(known) => known.into_mut(),
            Entry::Vacant(new) => {
                bar.set_message(format!("preparing {} and its CPU reference", cell.spec.describe()));
                new.insert(Problem::new(cell.spec, seed)?)
            }
        };
        bar.set_message(format!("{} {} × {}", cell.spec.workload(), cell.blocks, cell.threads));
        run_cell(gpu, cell, problem, reps, &bar, &mut timeouts, &mut runs);
    }
    bar.finish_and_clear();
    Ok(runs)
}

/// One cell: refusals recorded, a warm-up per barrier, then `reps` rounds over the
/// barriers still standing (a barrier that failed to run is not tried again).
fn run_cell(
    gpu: &Gpu,
    cell: &Cell,
    problem: &Problem,
    reps: u32,
    bar: &ProgressBar,
    timeouts: &mut Timeouts,
    runs: &mut Vec<Run>,
) {
    let per_run = if matches!(cell.spec, ProblemSpec::Empty { .. }) { 2 } else { 1 };
    let row = |barrier: Barrier, rep: u32| Run {
        experiment: cell.experiment,
        workload: cell.spec.workload(),
        problem: cell.spec.describe(),
        phases: cell.spec.phases(cell.threads),
        threads: cell.threads,
        blocks: cell.blocks,
        barrier,
        groups: resolved_groups(barrier, cell.blocks),
        rep,
        status: Status::Ok,
        time_us: None,
        detail: String::new(),
    };
    let mut standing: Vec<(Barrier, Launch)> = Vec::new();
    for &barrier in &cell.barriers {
        let skipped = if let Some(reason) = barrier_refusal(barrier, cell.threads, cell.blocks) {
            Some((Status::Refused, reason))
        } else if timeouts.get(&(barrier, cell.threads)).is_some_and(|&n| n >= TIMEOUT_LIMIT) {
            let reason = format!(
                "not launched: barrier `{barrier}` already timed out {TIMEOUT_LIMIT} times at {} threads per block",
                cell.threads
            );
            Some((Status::Error, reason))
        } else {
            None
        };
        if let Some((status, detail)) = skipped {
            runs.push(Run { status, detail, ..row(barrier, 0) });
            bar.inc(u64::from(reps + 1) * per_run);
            continue;
        }
        let launch = Launch::new().threads(cell.threads).blocks(cell.blocks).barrier(barrier);
        let ended = record(problem, gpu, &launch, row(barrier, 0), runs);
        bar.inc(per_run);
        note_timeout(timeouts, ended, barrier, cell.threads);
        if ended == Ended::Ran {
            standing.push((barrier, launch));
        } else {
            bar.inc(u64::from(reps) * per_run);
        }
    }
    for rep in 1..=reps {
        standing.retain(|(barrier, launch)| {
            let ended = record(problem, gpu, launch, row(*barrier, rep), runs);
            note_timeout(timeouts, ended, *barrier, cell.threads);
            let ran = ended == Ended::Ran;
            bar.inc(if ran { per_run } else { u64::from(reps - rep + 1) * per_run });
            ran
        });
    }
}

fn note_timeout(timeouts: &mut Timeouts, ended: Ended, barrier: Barrier, threads: u32) {
    if ended == Ended::TimedOut {
        *timeouts.entry((barrier, threads)).or_default() += 1;
    }
}

/// Runs `problem` once and appends its rows (one per launch) to `runs`; a failed launch
/// is recorded as one refused or error row.
fn record(problem: &Problem, gpu: &Gpu, launch: &Launch, row: Run, runs: &mut Vec<Run>) -> Ended {
    match problem.run(gpu, launch) {
        Ok(measurements) => {
            for m in measurements {
                let (status, time_us, detail) = match m.outcome {
                    Outcome::Correct(time) => (Status::Ok, Some(micros(time)), String::new()),
                    Outcome::Wrong(why) => (Status::Wrong, None, why),
                };
                runs.push(Run { phases: m.phases, status, time_us, detail, ..row.clone() });
            }
            Ended::Ran
        }
        Err(error) => {
            let timed_out = matches!(error, Error::BarrierTimeout { .. });
            runs.push(Run { status: classify(&error), detail: shorten(&error.to_string()), ..row });
            if timed_out {
                Ended::TimedOut
            } else {
                Ended::Failed
            }
        }
    }
}

fn micros(time: Duration) -> f64 {
    time.as_secs_f64() * 1e6
}

/// The first line of a message, at most [`DETAIL_LIMIT`] characters.
fn shorten(message: &str) -> String {
    let line = first_line(message);
    match line.char_indices().nth(DETAIL_LIMIT) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line.to_owned(),
    }
}

fn progress_bar(total: u64, visible: bool) -> ProgressBar {
    let target = if visible { ProgressDrawTarget::stderr() } else { ProgressDrawTarget::hidden() };
    let bar = ProgressBar::with_draw_target(Some(total), target);
    let style = ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} launches, eta {eta} {msg}")
        .map(|style| style.progress_chars("=> "))
        .unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style);
    bar
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Workload;

    #[test]
    fn lfs_past_the_block_size_and_impossible_group_counts_are_refused_before_launch() {
        assert!(barrier_refusal(Barrier::Lfs, 32, 32).is_none());
        let reason = barrier_refusal(Barrier::Lfs, 32, 33).expect("33 > 32");
        assert!(reason.contains("at most 32 blocks"), "{reason}");
        assert!(barrier_refusal(Barrier::Ulfs, 32, 33).is_none());
        assert!(barrier_refusal(Barrier::Ilbs { groups: Some(8) }, 32, 7).is_some());
        assert!(barrier_refusal(Barrier::Ilbs { groups: Some(7) }, 32, 7).is_none());
        assert!(barrier_refusal(Barrier::Ilbs { groups: None }, 32, 7).is_none());
    }

    #[test]
    fn runtime_refusals_are_told_apart_from_failures() {
        let too_large = Error::GridTooLarge {
            kernel: "k".into(),
            requested: 10,
            max: 5,
            blocks_per_sm: 1,
            sm_count: 5,
            threads: 32,
        };
        assert_eq!(classify(&too_large), Status::Refused);
        let timeout = Error::BarrierTimeout {
            kernel: "k".into(),
            barrier: "lbs".into(),
            phase: 1,
            block: 0,
            limit: Duration::from_secs(5),
        };
        assert_eq!(classify(&timeout), Status::Error);
    }

    #[test]
    fn long_messages_are_cut_to_their_first_line() {
        assert_eq!(shorten("one\ntwo"), "one");
        let long = "x".repeat(DETAIL_LIMIT + 10);
        assert_eq!(shorten(&long).chars().count(), DETAIL_LIMIT + 1);
    }

    #[test]
    fn a_barrier_that_keeps_timing_out_is_not_launched_again_at_that_block_size() {
        let cell = Cell {
            experiment: Experiment::Paper,
            spec: ProblemSpec::Empty { phases: 2 },
            threads: 32,
            blocks: 7,
            barriers: vec![Barrier::Ulfs, Barrier::Lbs],
        };
        let mut timeouts = Timeouts::new();
        timeouts.insert((Barrier::Ulfs, 32), TIMEOUT_LIMIT);
        timeouts.insert((Barrier::Lbs, 256), TIMEOUT_LIMIT);
        let mut runs = Vec::new();
        let problem = Problem::new(cell.spec, 1).expect("problem");
        run_cell(&Gpu::emulator(), &cell, &problem, 1, &ProgressBar::hidden(), &mut timeouts, &mut runs);
        let ulfs: Vec<&Run> = runs.iter().filter(|r| r.barrier == Barrier::Ulfs).collect();
        assert_eq!(ulfs.len(), 1);
        assert_eq!(ulfs[0].status, Status::Error);
        assert!(ulfs[0].detail.contains("already timed out 2 times"), "{}", ulfs[0].detail);
        assert!(runs.iter().filter(|r| r.barrier == Barrier::Lbs).all(|r| r.status == Status::Ok), "other block size");
    }

    #[test]
    fn a_cell_records_a_warm_up_and_each_repetition_and_refuses_lfs_beyond_the_block_size() {
        let gpu = Gpu::emulator();
        let cell = Cell {
            experiment: Experiment::Paper,
            spec: ProblemSpec::Empty { phases: 2 },
            threads: 32,
            blocks: 33,
            barriers: vec![Barrier::Lbs, Barrier::Lfs],
        };
        let runs = execute(&gpu, &[cell], 2, 1, false).expect("runs");
        let lbs: Vec<&Run> = runs.iter().filter(|r| r.barrier == Barrier::Lbs).collect();
        assert_eq!(lbs.len(), 3 * 2, "warm-up and 2 reps, each P and 2P");
        assert!(lbs.iter().all(|r| r.status == Status::Ok && r.time_us.is_some()));
        assert_eq!(lbs.iter().filter(|r| r.rep == 0).count(), 2);
        assert_eq!(lbs.iter().map(|r| r.phases).collect::<Vec<_>>(), [2, 4, 2, 4, 2, 4]);
        let lfs: Vec<&Run> = runs.iter().filter(|r| r.barrier == Barrier::Lfs).collect();
        assert_eq!(lfs.len(), 1);
        assert_eq!((lfs[0].status, lfs[0].time_us), (Status::Refused, None));
        assert!(runs.iter().all(|r| r.workload == Workload::EmptyPhases && r.blocks == 33));
    }
}
