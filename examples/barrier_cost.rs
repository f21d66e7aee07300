//! What one phase boundary costs under every barrier: a benchmark, not a test.
//!
//! ```text
//! cargo run --release --example barrier_cost
//! cargo run --release --example barrier_cost -- --gpus 2   # spanning a team, beside one GPU
//! ```
//!
//! The kernel `empty_phases` runs P nearly empty phases; a boundary costs
//! (t(2P) − t(P)) / P, which cancels the launch itself. Each figure is the
//! median of `--reps` measurements after a warm-up, all variants in one run.
//! Every cell gives the cost in µs and its ratio to the cooperative barrier;
//! Auto's cell names the barrier it ran, and the last column its cost over the
//! fastest device barrier of the row. A second table per block size gives the
//! software barriers with the watchdog off.

mod common;

use clap::Parser;
use common::AnyError;
use gsync::kernels::empty_phases;
use gsync::prelude::*;
use std::process::ExitCode;

/// Measures the cost of one phase boundary per barrier and grid.
#[derive(Parser)]
struct Args {
    /// Phases per measurement (P); the second run uses 2P.
    #[arg(long, default_value_t = 1000)]
    phases: u32,
    /// Measurements per figure; the median is printed.
    #[arg(long, default_value_t = 5)]
    reps: usize,
    /// Measure only the research paper's setting (32 threads, 7…60 blocks).
    #[arg(long)]
    paper_only: bool,
    /// Block sizes of the tables beyond the paper's setting.
    #[arg(long, value_delimiter = ',', default_values_t = [32u32, 64, 128, 256, 1024])]
    threads: Vec<u32>,
    /// Also measure the boundary spanning a team of this many GPUs (one process each),
    /// beside the same boundary on each GPU alone, in the same run.
    #[arg(long)]
    gpus: Option<u32>,
}

/// The software barriers, whose watchdog can be switched off.
const SOFTWARE: [Barrier; 5] =
    [Barrier::Lbs, Barrier::Lfs, Barrier::Ilbs { groups: None }, Barrier::Ulfs, Barrier::Relay];

/// One column: a name and its launch.
struct Variant {
    name: String,
    launch: Launch,
}

/// The columns: every device barrier, Auto, and MultiLaunch with and without graph replay.
fn variants() -> Vec<Variant> {
    let mut columns: Vec<Variant> = Barrier::DEVICE
        .iter()
        .chain(&[Barrier::Auto, Barrier::MultiLaunch])
        .map(|&barrier| Variant { name: barrier.to_string(), launch: Launch::new().barrier(barrier) })
        .collect();
    columns.push(Variant {
        name: "multi-launch graph".to_string(),
        launch: Launch::new().barrier(Barrier::MultiLaunch).graph(true),
    });
    columns
}

/// One measured cell: the cost per boundary and the barrier that ran.
#[derive(Clone, Copy)]
struct Cell {
    micros: f64,
    ran: Barrier,
}

fn main() -> ExitCode {
    common::exit_code(run(&Args::parse()))
}

fn run(args: &Args) -> Result<(), AnyError> {
    if let Some(gpus) = args.gpus {
        // Every PE runs this program; each measures its GPU alone and the team, PE 0 prints.
        gsync::Team::cuda(gpus)?.run(|gpu| common::spanning_table(gpu, args.phases, args.reps, &args.threads))?;
        return Ok(());
    }
    let gpu = Gpu::cuda(0)?; // a benchmark of GPU barriers: no emulator fallback
    let info = gpu.info();
    println!("# Cost of one phase boundary (µs, median of {}), {}, {} SMs", args.reps, info.name, info.sm_count);
    let paper: Vec<u32> = (7..=60).collect();
    table(&gpu, args, 32, &paper, "32 threads per block, the research paper's grids")?;
    if args.paper_only {
        return Ok(());
    }
    let sms = info.sm_count;
    for &threads in &args.threads {
        let max = empty_phases::max_coresident_blocks(&gpu, &Launch::new().threads(threads))?;
        // 7 and 10: either side of the step in cost between 9 and 10 blocks.
        let mut grids: Vec<u32> = vec![7, 10, sms / 4, sms / 2, sms, 2 * sms, 4 * sms, 8 * sms, 16 * sms, max];
        grids.retain(|&g| g >= 1 && g <= max);
        grids.sort_unstable();
        grids.dedup();
        table(
            &gpu,
            args,
            threads,
            &grids,
            &format!("{threads} threads per block, up to the largest co-resident grid"),
        )?;
    }
    Ok(())
}

fn table(gpu: &Gpu, args: &Args, threads: u32, grids: &[u32], title: &str) -> Result<(), AnyError> {
    let variants = variants();
    let names: Vec<&str> = variants.iter().map(|variant| variant.name.as_str()).collect();
    let mut marker = gpu.zeros::<u32>(1)?;
    let mut on_rows = Vec::new();
    let mut off_rows = Vec::new();
    for &blocks in grids {
        let mut cells: Vec<Option<Cell>> = Vec::new();
        for variant in &variants {
            let launch = variant.launch.clone().threads(threads).blocks(blocks);
            cells.push(measure(gpu, &launch, &mut marker, args)?);
        }
        let cooperative = cells[0].map(|cell| cell.micros);
        let best =
            cells[..Barrier::DEVICE.len()].iter().flatten().map(|cell| cell.micros).fold(f64::INFINITY, f64::min);
        let mut row: Vec<String> = cells.iter().map(|cell| show(*cell, cooperative)).collect();
        let auto = cells[Barrier::DEVICE.len()];
        if let Some(auto) = auto {
            row[Barrier::DEVICE.len()] = format!("{} {}", row[Barrier::DEVICE.len()], auto.ran);
        }
        let over = auto.map_or("–".to_string(), |auto| format!("{:+.1}%", (auto.micros / best - 1.0) * 100.0));
        on_rows.push(format!("| {blocks} | {} | {over} |", row.join(" | ")));
        let mut off = Vec::new();
        for barrier in SOFTWARE {
            let on = cells[Barrier::DEVICE.iter().position(|&b| b == barrier).unwrap_or(0)];
            let launch = Launch::new().barrier(barrier).threads(threads).blocks(blocks).watchdog(None);
            off.push(match (measure(gpu, &launch, &mut marker, args)?, on) {
                (Some(off), Some(on)) => format!("{:.2} ({:+.1}%)", off.micros, (on.micros / off.micros - 1.0) * 100.0),
                _ => "–".to_string(),
            });
        }
        off_rows.push(format!("| {blocks} | {} |", off.join(" | ")));
    }
    println!("\n## {title}\n");
    println!("Cells: µs per boundary (ratio to cooperative). The last column: Auto over the fastest device barrier.\n");
    println!("| blocks | {} | auto vs best |", names.join(" | "));
    println!("|---:|{}---:|", "---:|".repeat(variants.len()));
    on_rows.iter().for_each(|row| println!("{row}"));
    println!("\n### Watchdog off, {threads} threads: µs per boundary (the watchdog's cost)\n");
    let software: Vec<String> = SOFTWARE.iter().map(Barrier::to_string).collect();
    println!("| blocks | {} |", software.join(" | "));
    println!("|---:|{}", "---:|".repeat(SOFTWARE.len()));
    off_rows.iter().for_each(|row| println!("{row}"));
    Ok(())
}

/// "µs (ratio×)", or "–" for a grid the barrier refuses.
fn show(cell: Option<Cell>, cooperative: Option<f64>) -> String {
    match (cell, cooperative) {
        (Some(cell), Some(cooperative)) => format!("{:.2} ({:.2}×)", cell.micros, cell.micros / cooperative),
        (Some(cell), None) => format!("{:.2}", cell.micros),
        (None, _) => "–".to_string(),
    }
}

/// Median over `reps` of (t(2P) − t(P)) / P in microseconds, checking the last phase's
/// write; `None` when the barrier refuses the grid (LFS beyond its block size).
fn measure(gpu: &Gpu, launch: &Launch, marker: &mut DeviceBuffer<u32>, args: &Args) -> Result<Option<Cell>, AnyError> {
    let p = args.phases;
    // Warm-up: compile, load, first touch.
    let ran = match empty_phases::launch_with(gpu, launch, marker, p) {
        Ok(report) => report.barrier,
        Err(e) if common::barrier_refused(&e) => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let mut samples = Vec::with_capacity(args.reps);
    for _ in 0..args.reps {
        let short = empty_phases::launch_with(gpu, launch, marker, p)?.gpu_time;
        let long = empty_phases::launch_with(gpu, launch, marker, 2 * p)?.gpu_time;
        samples.push((long.as_secs_f64() - short.as_secs_f64()) * 1e6 / f64::from(p));
    }
    let last = gpu.download(marker)?[0];
    if last != 2 * p - 1 {
        return Err(format!("{}: the last phase wrote {last}, not {}", launch.selected_barrier(), 2 * p - 1).into());
    }
    samples.sort_by(f64::total_cmp);
    Ok(Some(Cell { micros: samples[samples.len() / 2], ran }))
}
