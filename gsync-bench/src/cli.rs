//! The command line: `replicate` runs everything and writes the results,
//! `render` redraws the report and plots from a results directory.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use clap::{Args, Parser, Subcommand, ValueEnum};
use gsync::{Backend, Gpu};

use crate::analysis::Dataset;
use crate::error::{BenchError, Result};
use crate::model::Experiment;
use crate::plan::{self, Cell, Settings};
use crate::record::{self, Meta};
use crate::workloads::{sw_tile_height, sw_widest_diagonal, ProblemSpec};
use crate::{figures, machine, paper, plots, report, runner};

/// The largest grid of a quick run, and of any run on the emulator unless --max-blocks says otherwise:
/// just past the second multiple of the paper's block size.
pub const QUICK_MAX_BLOCKS: u32 = 66;

/// Replicates the inter-block barrier experiments of Savadi, Salavatizadeh and Riahi with gsync.
#[derive(Parser, Debug)]
#[command(name = "gsync-bench", version, about)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Runs the replication on the GPU it finds and writes runs.csv, meta.csv, report.md and plots to --out.
    Replicate(Box<ReplicateArgs>),
    /// Re-renders report.md and the plots from DIR/runs.csv and DIR/meta.csv, running nothing.
    Render {
        /// The results directory.
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
    },
}

/// Where kernels run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum BackendChoice {
    /// The first CUDA GPU if there is one, else the CPU emulator.
    Auto,
    /// The first CUDA GPU; an error without one.
    Cuda,
    /// The CPU emulator (only with --quick).
    Emulator,
}

/// The options of `replicate`.
#[derive(Args, Debug)]
pub struct ReplicateArgs {
    /// Directory for runs.csv, meta.csv, report.md and the plots (created if missing).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Tiny problems and few grids: seconds on the CPU emulator, to exercise the whole pipeline.
    #[arg(long)]
    pub quick: bool,
    /// Timed repetitions per configuration, after one warm-up [default: 7; 2 with --quick].
    #[arg(long)]
    pub reps: Option<u32>,
    /// Where kernels run.
    #[arg(long, value_enum, default_value_t = BackendChoice::Auto)]
    pub backend: BackendChoice,
    /// Seed of every input.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Run only these experiments [default: all].
    #[arg(long, value_enum, value_delimiter = ',')]
    pub only: Vec<ExperimentChoice>,
    /// Bitonic keys in the paper's setting [default: 16384; 1024 with --quick].
    #[arg(long)]
    pub bitonic_n: Option<usize>,
    /// Bitonic keys per shared-memory tile [default: 64, twice the 32 threads of a block].
    #[arg(long)]
    pub bitonic_tile: Option<usize>,
    /// Smith-Waterman tile width in columns in the paper's setting [default: 32; 16 with --quick].
    #[arg(long)]
    pub sw_tile_cols: Option<u32>,
    /// Smith-Waterman first sequence length [default: 60 tile heights].
    #[arg(long)]
    pub sw_m: Option<usize>,
    /// Smith-Waterman second sequence length [default: 60 tile widths].
    #[arg(long)]
    pub sw_n: Option<usize>,
    /// Phases P of the empty-phases kernel (it also runs 2P) [default: 500; 20 with --quick].
    #[arg(long)]
    pub phases: Option<u32>,
    /// Grids of the ILBS group sweep; `max` is the largest co-resident grid [default: 36,60,max; 9 with --quick].
    #[arg(long, value_delimiter = ',')]
    pub group_blocks: Vec<String>,
    /// Multiples k of the block size around which ULFS is measured [default: 1,2,3,4,8,32; 1,2 with --quick].
    #[arg(long, value_delimiter = ',')]
    pub multiples: Vec<u32>,
    /// Block sizes of the extended sweep [default: 32,256,1024; 32,256 with --quick].
    #[arg(long, value_delimiter = ',')]
    pub block_sizes: Vec<u32>,
    /// Bitonic keys in the extended sweep [default: 1048576; 2048 with --quick].
    #[arg(long)]
    pub ext_bitonic_n: Option<usize>,
    /// Smith-Waterman sequence length in the extended sweep [default: 8192; 128 with --quick].
    #[arg(long)]
    pub ext_sw_len: Option<usize>,
    /// Upper bound on every grid but the paper's [default: none on a GPU; 66 with --quick or on the emulator].
    #[arg(long)]
    pub max_blocks: Option<u32>,
    /// Print what would run (configurations and launches) and stop.
    #[arg(long)]
    pub dry_run: bool,
    /// No progress bar.
    #[arg(long)]
    pub no_progress: bool,
}

/// Experiments as the command line names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ExperimentChoice {
    /// 32 threads, 7–60 blocks, every barrier.
    Paper,
    /// ILBS group counts at fixed grids.
    Groups,
    /// ULFS around multiples of the block size.
    Multiples,
    /// Block sizes 32/256/1024 up to the co-resident grid.
    Extended,
}

impl From<ExperimentChoice> for Experiment {
    fn from(choice: ExperimentChoice) -> Experiment {
        match choice {
            ExperimentChoice::Paper => Experiment::Paper,
            ExperimentChoice::Groups => Experiment::Groups,
            ExperimentChoice::Multiples => Experiment::Multiples,
            ExperimentChoice::Extended => Experiment::Extended,
        }
    }
}

/// Parses the command line and runs it; prints any error and returns the exit code.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Replicate(args) => replicate(&args),
        Command::Render { out } => render(&out).map(|data| print!("{}", report::summary(&data))),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The settings the options describe.
pub fn settings(args: &ReplicateArgs) -> Result<Settings> {
    let quick = args.quick;
    let pick = |given: Option<usize>, full: usize, small: usize| given.unwrap_or(if quick { small } else { full });
    let reps = args.reps.unwrap_or(if quick { 2 } else { 7 });
    if reps == 0 {
        return Err(BenchError::Usage("--reps must be at least 1".into()));
    }
    let b = paper::BLOCK_SIZE;
    let tile_cols = args.sw_tile_cols.unwrap_or(if quick { 16 } else { 32 });
    let height = sw_tile_height(b, tile_cols);
    let widest = paper::LAST_BLOCKS as usize;
    let (sw_m, sw_n) = if quick {
        (args.sw_m.unwrap_or(2 * height), args.sw_n.unwrap_or(4 * tile_cols as usize))
    } else {
        (args.sw_m.unwrap_or(widest * height), args.sw_n.unwrap_or(widest * tile_cols as usize))
    };
    let group_blocks = if args.group_blocks.is_empty() {
        if quick {
            vec![Some(9)]
        } else {
            vec![Some(36), Some(60), None]
        }
    } else {
        args.group_blocks.iter().map(|g| parse_grid(g)).collect::<Result<_>>()?
    };
    let or = |given: &[u32], full: &[u32], small: &[u32]| -> Vec<u32> {
        if !given.is_empty() {
            given.to_vec()
        } else if quick {
            small.to_vec()
        } else {
            full.to_vec()
        }
    };
    let experiments =
        if args.only.is_empty() { Experiment::ALL.to_vec() } else { args.only.iter().map(|&c| c.into()).collect() };
    let settings = Settings {
        reps,
        seed: args.seed,
        experiments,
        paper_blocks: if quick { vec![7, 12, 20, 32, 33, 40, 48, 60] } else { paper::blocks() },
        bitonic: ProblemSpec::Bitonic {
            n: pick(args.bitonic_n, 1 << 14, 1 << 10),
            tile: args.bitonic_tile.unwrap_or(2 * b as usize),
        },
        smith_waterman: ProblemSpec::SmithWaterman { m: sw_m, n: sw_n, tile_cols },
        empty: ProblemSpec::Empty { phases: args.phases.unwrap_or(if quick { 20 } else { 500 }) },
        group_blocks,
        group_apps_max_blocks: 2 * b,
        multiples: or(&args.multiples, &[1, 2, 3, 4, 8, 32], &[1, 2]),
        block_sizes: or(&args.block_sizes, &[32, 256, 1024], &[32, 256]),
        ext_bitonic_n: pick(args.ext_bitonic_n, 1 << 20, 2048),
        ext_sw_len: pick(args.ext_sw_len, 8192, 128),
        max_blocks: args.max_blocks.or(if quick { Some(QUICK_MAX_BLOCKS) } else { None }),
    };
    check(&settings)?;
    Ok(settings)
}

/// Refuses settings no run could use.
fn check(s: &Settings) -> Result<()> {
    let usage = |m: &str| Err(BenchError::Usage(m.to_owned()));
    if s.block_sizes.iter().any(|&t| t == 0 || t > 1024) {
        return usage("--block-sizes must be between 1 and 1024");
    }
    if s.multiples.contains(&0) {
        return usage("--multiples must be at least 1");
    }
    if s.max_blocks == Some(0) {
        return usage("--max-blocks must be at least 1");
    }
    if matches!(s.empty, ProblemSpec::Empty { phases } if phases == 0 || phases > 1 << 30) {
        return usage("--phases must be between 1 and 2^30");
    }
    if s.ext_sw_len == 0 || s.ext_bitonic_n < 2 {
        return usage("the extended problems need at least 1 residue and 2 keys");
    }
    match (s.bitonic, s.smith_waterman) {
        (ProblemSpec::Bitonic { n, .. }, ProblemSpec::SmithWaterman { m, n: sw_n, tile_cols })
            if n >= 2 && m > 0 && sw_n > 0 && tile_cols > 0 =>
        {
            Ok(())
        }
        _ => usage("--bitonic-n must be at least 2; --sw-m, --sw-n and --sw-tile-cols at least 1"),
    }
}

/// A grid of the group sweep: a number, or `max` for the largest co-resident grid.
fn parse_grid(text: &str) -> Result<Option<u32>> {
    match text.trim() {
        "max" => Ok(None),
        n => match n.parse::<u32>() {
            Ok(blocks) if blocks > 0 => Ok(Some(blocks)),
            _ => Err(BenchError::Usage(format!("--group-blocks: `{n}` is neither a positive number nor `max`"))),
        },
    }
}

/// The problems in words, for the report.
fn problems_note(s: &Settings) -> String {
    let b = paper::BLOCK_SIZE;
    let mut parts = Vec::new();
    if let ProblemSpec::Bitonic { n, tile } = s.bitonic {
        parts.push(format!(
            "Bitonic sort (paper's setting): {n} random `u32` keys, ascending, keys only, shared-memory tiles of \
             {tile} keys (twice the 32 threads of a block) — small against n, so that most compare distances \
             cross tiles and take a `grid_sync()` rather than a `sync_block()`."
        ));
    }
    if let ProblemSpec::SmithWaterman { m, n, tile_cols } = s.smith_waterman {
        let height = sw_tile_height(b, tile_cols);
        let widest = sw_widest_diagonal(m, n, b, tile_cols);
        let reach = if widest >= paper::LAST_BLOCKS as usize {
            format!("every block of the paper's largest grid ({}) has work in the middle phases", paper::LAST_BLOCKS)
        } else {
            format!("at most {widest} blocks have work in any phase")
        };
        parts.push(format!(
            "Smith-Waterman (paper's setting): two random protein sequences of {m} and {n} residues (the 20 amino \
             acids, uniform), BLOSUM62, gap open 11, extend 1; tiles of {height} rows (found from the library's \
             `grid_syncs`) by {tile_cols} columns, so the longest tile diagonal has {widest} tiles and {reach}."
        ));
    }
    if let ProblemSpec::Empty { phases } = s.empty {
        parts.push(format!("Empty phases: P = {phases} and 2P = {}.", 2 * phases));
    }
    parts.push(format!(
        "Extended sweep: bitonic {} keys and Smith-Waterman {} × {} residues, tiles of 2 × threads keys / \
         columns (the library clamps tile sizes to what it supports).",
        s.ext_bitonic_n, s.ext_sw_len, s.ext_sw_len
    ));
    parts.join(" ")
}

/// Opens the GPU the options ask for.
fn open_gpu(choice: BackendChoice) -> Result<Gpu> {
    match choice {
        BackendChoice::Auto => Ok(Gpu::new(0)?),
        BackendChoice::Cuda => {
            Gpu::cuda(0).map_err(|e| BenchError::Usage(format!("--backend cuda: no usable CUDA GPU: {e}")))
        }
        BackendChoice::Emulator => Ok(Gpu::emulator()),
    }
}

/// `replicate`: plan, run, write, render.
fn replicate(args: &ReplicateArgs) -> Result<()> {
    let started = Instant::now();
    let mut settings = settings(args)?;
    let gpu = open_gpu(args.backend)?;
    if gpu.backend() == Backend::Emulator {
        if !args.quick && !args.dry_run {
            return Err(BenchError::Usage(
                "the full replication needs a CUDA GPU: on the CPU emulator it would take hours, and its times \
                 say nothing about GPU barriers; add --quick to exercise the pipeline on the emulator"
                    .into(),
            ));
        }
        settings.max_blocks = Some(settings.max_blocks.unwrap_or(QUICK_MAX_BLOCKS));
    }
    let sm_count = gpu.info().sm_count;
    let mut limits =
        |spec: ProblemSpec, threads: u32| runner::coresident_limit(&gpu, spec, threads, settings.max_blocks);
    let cells = plan::build(&settings, sm_count, &mut limits)?;
    if args.dry_run {
        print!("{}", plan_summary(&cells, settings.reps));
        return Ok(());
    }
    std::fs::create_dir_all(&args.out).map_err(BenchError::io(&args.out))?;
    eprintln!(
        "gsync-bench: {} on {} ({}), {} configurations, {} launches",
        args.out.display(),
        gpu.info().name,
        gpu.backend(),
        cells.len(),
        cells.iter().map(|c| c.launches(settings.reps)).sum::<u64>()
    );
    let runs = runner::execute(&gpu, &cells, settings.reps, settings.seed, !args.no_progress)?;
    let mut meta = Meta::default();
    machine::describe(&gpu, &mut meta);
    record_settings(&mut meta, &settings);
    meta.set("wall_time", format!("{:.0} s", started.elapsed().as_secs_f64()));
    record::write_runs(&args.out.join("runs.csv"), &runs)?;
    record::write_meta(&args.out.join("meta.csv"), &meta)?;
    let data = render(&args.out)?;
    print!("{}", report::summary(&data));
    eprintln!(
        "gsync-bench: wrote {} in {:.0} s",
        args.out.join("report.md").display(),
        started.elapsed().as_secs_f64()
    );
    let failed = data.totals.wrong + data.totals.error;
    if failed > 0 {
        return Err(BenchError::Usage(format!(
            "{failed} runs gave a wrong answer or failed (listed in {}); they are excluded from every figure",
            args.out.join("report.md").display()
        )));
    }
    Ok(())
}

/// Records the settings and the command in `meta`.
fn record_settings(meta: &mut Meta, s: &Settings) {
    let args: Vec<String> = std::env::args_os().map(|a| a.to_string_lossy().into_owned()).collect();
    meta.set("command", args.join(" "));
    meta.set("version", env!("CARGO_PKG_VERSION"));
    meta.set("commit", option_env!("GSYNC_BENCH_COMMIT").unwrap_or("unknown"));
    meta.set("reps", s.reps.to_string());
    meta.set("seed", s.seed.to_string());
    meta.set("experiments", s.experiments.iter().map(|e| e.name()).collect::<Vec<_>>().join(","));
    meta.set("problems_note", problems_note(s));
}

/// `render`: report.md and every plot from DIR/runs.csv; returns the data for the summary.
pub fn render(dir: &Path) -> Result<Dataset> {
    let runs_path = dir.join("runs.csv");
    if !runs_path.exists() {
        return Err(BenchError::Usage(format!(
            "{} does not exist; run `gsync-bench replicate --out {}` first",
            runs_path.display(),
            dir.display()
        )));
    }
    let runs = record::read_runs(&runs_path)?;
    let meta = record::read_meta(&dir.join("meta.csv"))?;
    let data = Dataset::from_runs(&runs);
    let mut stems = Vec::new();
    for figure in figures::all(&data) {
        plots::write(dir, &figure.stem, &figure.chart)?;
        stems.push(figure.stem);
    }
    let report_path = dir.join("report.md");
    std::fs::write(&report_path, report::markdown(&data, &meta, &stems)).map_err(BenchError::io(&report_path))?;
    Ok(data)
}

/// What a plan would run, by experiment, workload and block size.
pub fn plan_summary(cells: &[Cell], reps: u32) -> String {
    let mut lines: Vec<(String, usize, u64)> = Vec::new();
    for cell in cells {
        let key = format!("{} {} {} threads", cell.experiment, cell.spec.workload(), cell.threads);
        let launches = cell.launches(reps);
        match lines.iter_mut().find(|(k, _, _)| *k == key) {
            Some(line) => {
                line.1 += cell.barriers.len();
                line.2 += launches;
            }
            None => lines.push((key, cell.barriers.len(), launches)),
        }
    }
    let mut out = String::new();
    for (key, configurations, launches) in &lines {
        out += &format!("{key}: {configurations} configurations, {launches} launches\n");
    }
    let total: u64 = lines.iter().map(|l| l.2).sum();
    out += &format!("total: {} configurations, {total} launches ({reps} repetitions + 1 warm-up each)\n", {
        lines.iter().map(|l| l.1).sum::<usize>()
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(extra: &[&str]) -> ReplicateArgs {
        let mut argv = vec!["gsync-bench", "replicate", "--out", "results"];
        argv.extend_from_slice(extra);
        match Cli::try_parse_from(argv).expect("valid command line").command {
            Command::Replicate(args) => *args,
            Command::Render { .. } => unreachable!("replicate was given"),
        }
    }

    #[test]
    fn defaults_follow_the_paper_and_quick_shrinks_everything() {
        let full = settings(&args(&[])).expect("settings");
        assert_eq!(full.paper_blocks, (7..=60).collect::<Vec<_>>());
        assert_eq!(full.reps, 7);
        assert_eq!(full.bitonic, ProblemSpec::Bitonic { n: 16384, tile: 64 });
        assert_eq!(full.group_blocks, vec![Some(36), Some(60), None]);
        assert_eq!(full.max_blocks, None);
        if let ProblemSpec::SmithWaterman { m, n, tile_cols } = full.smith_waterman {
            assert_eq!(sw_widest_diagonal(m, n, 32, tile_cols), 60);
        }
        let quick = settings(&args(&["--quick", "--only", "paper,groups"])).expect("settings");
        assert_eq!((quick.reps, quick.max_blocks), (2, Some(QUICK_MAX_BLOCKS)));
        assert_eq!(quick.experiments, vec![Experiment::Paper, Experiment::Groups]);
    }

    #[test]
    fn bad_options_are_errors_not_panics() {
        assert!(settings(&args(&["--reps", "0"])).is_err());
        assert!(settings(&args(&["--group-blocks", "36,lots"])).expect_err("bad grid").to_string().contains("lots"));
        assert!(settings(&args(&["--block-sizes", "2048"])).is_err());
        assert!(settings(&args(&["--bitonic-n", "1"])).is_err());
        assert!(settings(&args(&["--phases", "0"])).is_err());
        assert!(Cli::try_parse_from(["gsync-bench", "replicate"]).is_err(), "--out is required");
        assert!(Cli::try_parse_from(["gsync-bench", "replicate", "--out", "x", "--backend", "tpu"]).is_err());
        assert_eq!(parse_grid("max").expect("max"), None);
    }

    #[test]
    fn rendering_a_directory_without_runs_says_what_to_do() {
        let error = render(Path::new("/nonexistent/gsync-bench")).expect_err("no runs");
        assert!(error.to_string().contains("run `gsync-bench replicate --out"), "{error}");
    }

    #[test]
    fn the_quick_pipeline_runs_writes_and_renders_on_the_emulator() {
        let dir = std::env::temp_dir().join(format!("gsync-bench-quick-{}", std::process::id()));
        let dir_text = dir.to_string_lossy().into_owned();
        let argv = [
            "gsync-bench",
            "replicate",
            "--out",
            &dir_text,
            "--quick",
            "--backend",
            "emulator",
            "--reps",
            "1",
            "--only",
            "paper",
            "--no-progress",
        ];
        let Command::Replicate(mut args) = Cli::try_parse_from(argv).expect("valid").command else {
            unreachable!("replicate was given")
        };
        args.block_sizes = vec![32];
        replicate(&args).expect("the pipeline runs");
        for file in ["runs.csv", "meta.csv", "report.md", "fig07_sw_lbs_ilbs.svg", "fig10_bitonic_lfs_ulfs.png"] {
            let len = std::fs::metadata(dir.join(file)).map(|m| m.len()).unwrap_or(0);
            assert!(len > 0, "{file} is missing or empty");
        }
        let report = std::fs::read_to_string(dir.join("report.md")).expect("report");
        assert!(report.contains("gsync CPU emulator") && report.contains("## Verdicts"));
        std::fs::remove_dir_all(&dir).ok();
    }
}
