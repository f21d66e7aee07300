//! The 2-D heat equation (explicit 5-point scheme) two ways: the whole field
//! ping-ponged through global memory, fused or split into one launch per
//! step, against the field kept resident in shared memory with only the
//! strips' edge rows exchanged. Every timed run is verified bit for bit
//! against the CPU reference, which is computed once.
//!
//! ```text
//! cargo run --release --example heat -- --n 1024 --steps 10000
//! ```

mod common;

use clap::Parser;
use common::AnyError;
use gsync::kernels::heat::{self, heat_global, HeatError, Heated, ResidentForm};
use gsync::prelude::*;
use std::process::ExitCode;
use std::time::Duration;

/// Steps a random field on the GPU (or the CPU emulator) under each kernel and launch mode.
#[derive(Parser)]
struct Args {
    /// Side of the n × n field (default 1024 on a GPU, 64 on the CPU emulator).
    #[arg(long)]
    n: Option<usize>,
    /// Time steps, one phase each (default 10000 on a GPU, 20 on the emulator).
    #[arg(long)]
    steps: Option<u32>,
    /// The scheme's r = α·Δt/Δx² (stable up to 0.25).
    #[arg(long, default_value_t = 0.2)]
    r: f32,
    /// Timed repetitions of each configuration after one warm-up; the median is reported.
    #[arg(long, default_value_t = 3)]
    reps: usize,
}

/// One measured configuration: a row of the table.
#[derive(Clone)]
struct Row {
    variant: &'static str,
    grid: String,
    barrier: Barrier,
    time: Duration,
}

/// The fastest of `rows`, named `variant`.
fn fastest(variant: &'static str, rows: impl IntoIterator<Item = Row>) -> Result<Row, AnyError> {
    let best = rows.into_iter().min_by_key(|r| r.time);
    best.map(|r| Row { variant, ..r }).ok_or_else(|| format!("{variant}: every configuration was refused").into())
}

fn main() -> ExitCode {
    common::exit_code(run(&Args::parse()))
}

fn run(args: &Args) -> Result<(), AnyError> {
    let gpu = Gpu::new(0)?; // falls back to the CPU emulator without a CUDA GPU
    let emulated = gpu.backend() == Backend::Emulator;
    let n = args.n.unwrap_or(if emulated { 64 } else { 1024 });
    let steps = args.steps.unwrap_or(if emulated { 20 } else { 10_000 });
    let sm = gpu.info().sm_count.max(1);
    println!("{} — {n} × {n} field, {steps} steps, r = {}", gpu.info().name, args.r);

    let input = common::xorshift_floats(n * n);
    let workers = std::thread::available_parallelism().map_or(1, |w| w.get());
    let expected = heat::heat_reference_parallel(&input, n, steps, args.r, workers)?;
    let bench = Bench { args, input: &input, expected: &expected, n, steps };

    // Shapes worth trying: a few block sizes, one block per SM and more, the co-resident grid.
    let (threads, split_threads): (&[u32], &[u32]) =
        if emulated { (&[32, 64], &[64]) } else { (&[128, 256, 512, 1024], &[128, 256, 512]) };
    let mut fused = Vec::new();
    for &t in threads {
        let max = heat_global::max_coresident_blocks(&gpu, &Launch::new().threads(t))?;
        let grids = if emulated { vec![sm] } else { vec![sm, 2 * sm, max] };
        for blocks in grids.into_iter().filter(|&b| b <= max) {
            for barrier in [Barrier::Lbs, Barrier::Ilbs { groups: None }, Barrier::Relay, Barrier::Cooperative] {
                fused.push(Launch::new().threads(t).blocks(blocks).barrier(barrier));
            }
        }
    }
    let mut split = Vec::new();
    for &t in split_threads {
        let cover = u32::try_from((n * n.saturating_sub(2)).div_ceil(t as usize).max(1)).unwrap_or(u32::MAX);
        for blocks in [cover, 4 * sm] {
            split.push(Launch::new().threads(t).blocks(blocks).barrier(Barrier::MultiLaunch));
        }
    }
    let graph: Vec<Launch> = split.iter().map(|l| l.clone().graph(true)).collect();

    let global = |launch: &Launch| heat::run_global(&gpu, launch, &input, n, steps, args.r);
    let mut rows = Vec::new();
    rows.push(bench.best("global, fused default", &[Launch::new()], global)?);
    rows.push(bench.best("global, fused best shape", &fused, global)?);
    rows.push(bench.best("global, split stream", &split, global)?);
    let split_graph = bench.best("global, split graph", &graph, global)?;
    let graph_time = split_graph.time.as_secs_f64();
    rows.push(split_graph);

    // The resident kernels pin their grids: the default (Auto, the kernel and block size
    // `resident_grid` picks), then each form under the device barriers and other block sizes.
    let resident = |launch: &Launch| heat::run_resident(&gpu, launch, &input, n, steps, args.r);
    let grid = heat::resident_grid(&gpu, &Launch::new(), n)?;
    println!(
        "resident default: {:?}, {} blocks × {} threads, {} rows per block",
        grid.form, grid.blocks, grid.threads, grid.rows
    );
    rows.push(bench.best("resident, fused default", &[Launch::new()], resident)?);
    let resident_threads: &[u32] = if emulated { &[64, 256] } else { &[128, 256, 512, 1024] };
    for (form, variant) in
        [(ResidentForm::Columns, "resident columns, best"), (ResidentForm::Strips, "resident strips, best")]
    {
        let mut pinned = Vec::new();
        for threads in resident_threads.iter().map(|&t| Some(t)).chain([None]) {
            let sized = threads.map_or_else(Launch::new, |t| Launch::new().threads(t));
            match heat::resident_grid_as(&gpu, &sized, n, form) {
                // Too many blocks of this size, or no thread per column.
                Err(HeatError::NotCoresident { .. } | HeatError::NoColumns { .. }) => continue,
                other => other?,
            };
            for barrier in [Barrier::Auto, Barrier::Lbs, Barrier::Relay, Barrier::Cooperative] {
                pinned.push(sized.clone().barrier(barrier));
            }
        }
        let run = |launch: &Launch| heat::run_resident_as(&gpu, launch, form, &input, n, steps, args.r);
        match bench.best(variant, &pinned, run) {
            Ok(row) => rows.push(row),
            Err(e) => println!("{variant}: {e}"),
        }
    }

    // The columns kernel at each halo-exchange period its default grid allows.
    if grid.form == ResidentForm::Columns {
        const LABELS: [&str; 4] =
            ["columns, every step", "columns, every 2 steps", "columns, every 3 steps", "columns, every 4 steps"];
        for (depth, variant) in (1..=grid.depth).zip(LABELS) {
            let run = |launch: &Launch| heat::run_columns_at_depth(&gpu, launch, depth, &input, n, steps, args.r);
            rows.push(bench.best(variant, &[Launch::new()], run)?);
        }
    }

    println!("| variant | grid | barrier | total | per step | ÷ split graph |");
    println!("|---|---|---|---:|---:|---:|");
    for row in &rows {
        let total = row.time.as_secs_f64();
        let ratio = total / graph_time;
        println!(
            "| {} | {} | {} | {:.3} ms | {:.3} µs | {ratio:.3} |",
            row.variant,
            row.grid,
            row.barrier,
            total * 1e3,
            total * 1e6 / f64::from(steps.max(1))
        );
    }
    println!("verified: every run matches the CPU reference bit for bit ({} cells)", n * n);
    Ok(())
}

/// What every configuration runs on and is checked against.
struct Bench<'a> {
    args: &'a Args,
    input: &'a [f32],
    expected: &'a [f32],
    n: usize,
    steps: u32,
}

impl Bench<'_> {
    /// Every one of `launches` the barriers accept, with the median of its
    /// timed repetitions; every run is verified.
    fn measure(
        &self,
        variant: &'static str,
        launches: &[Launch],
        run: impl Fn(&Launch) -> Result<Heated, HeatError>,
    ) -> Result<Vec<Row>, AnyError> {
        let mut rows = Vec::new();
        for launch in launches {
            let mut times = Vec::new();
            let mut ran = None;
            for rep in 0..=self.args.reps {
                let heated = match run(launch) {
                    // LFS beyond its block size, ILBS with more groups than blocks, a grid
                    // that the barrier's own kernel cannot keep co-resident.
                    Err(HeatError::Gpu(e))
                        if common::barrier_refused(&e) || matches!(e, Error::GridTooLarge { .. }) =>
                    {
                        break
                    }
                    // A block size whose grid cannot keep the field resident.
                    Err(HeatError::NotCoresident { .. } | HeatError::TooFewBlocks { .. }) => break,
                    result => result?,
                };
                self.verify(&heated.field, variant, &heated.report)?;
                if rep > 0 {
                    times.push(heated.report.gpu_time);
                }
                ran = Some(heated.report);
            }
            let Some(report) = ran else { continue };
            let time = common::median(times).unwrap_or_default();
            let grid = format!("{} × {}", report.blocks, report.threads);
            let grid = if launch.replays_graph() { format!("{grid}, graph") } else { grid };
            rows.push(Row { variant, grid, barrier: report.barrier, time });
        }
        Ok(rows)
    }

    /// The fastest of `launches` (see [`Bench::measure`]).
    fn best(
        &self,
        variant: &'static str,
        launches: &[Launch],
        run: impl Fn(&Launch) -> Result<Heated, HeatError>,
    ) -> Result<Row, AnyError> {
        fastest(variant, self.measure(variant, launches, run)?)
    }

    /// Compares a result with the reference, bit for bit.
    fn verify(&self, field: &[f32], variant: &str, report: &LaunchReport) -> Result<(), AnyError> {
        let input_len = self.input.len();
        if field.len() != input_len {
            return Err(format!("{variant}: {} cells back, expected {input_len}", field.len()).into());
        }
        match (0..input_len).find(|&i| field[i].to_bits() != self.expected[i].to_bits()) {
            None => Ok(()),
            Some(i) => Err(format!(
                "{variant} on {} × {} ({}): cell ({}, {}) after {} steps is {}, the CPU has {}",
                report.blocks,
                report.threads,
                report.barrier,
                i / self.n,
                i % self.n,
                self.steps,
                field[i],
                self.expected[i]
            )
            .into()),
        }
    }
}
