//! A per-phase profile of the library's smoothing kernel: when every block arrived at and
//! left each `grid_sync()`, summarised per phase, written as a Chrome trace (open it in
//! Perfetto or chrome://tracing: one track per block) and plotted as an SVG of each phase's
//! time and its barrier's. The result is verified against the CPU bit for bit.
//!
//! ```text
//! cargo run --release --example profile -- --rounds 1000 --trace smooth.json --svg smooth.svg
//! ```

mod common;

use clap::Parser;
use gsync::kernels::{smooth, smooth_reference};
use gsync::prelude::*;
use gsync::{PhaseFigures, PhaseProfile};
use plotters::backend::SVGBackend;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Profiles the smoothing kernel and writes its timeline.
#[derive(Parser)]
struct Args {
    /// Number of elements (default 2^20 on a GPU, 2^14 on the CPU emulator).
    #[arg(long)]
    n: Option<usize>,
    /// Number of smoothing rounds, one phase each (default 1000 on a GPU, 100 on the emulator).
    #[arg(long)]
    rounds: Option<u32>,
    /// Blocks in the grid (default: the largest co-resident grid).
    #[arg(long)]
    blocks: Option<u32>,
    /// Threads per block (default: 256).
    #[arg(long)]
    threads: Option<u32>,
    /// The device barrier: auto, cooperative, lbs, lfs, ilbs, ilbs:G, ulfs or relay.
    #[arg(long, default_value = "auto")]
    barrier: Barrier,
    /// The most grid_sync() calls recorded per block (default: as many as the rounds).
    #[arg(long)]
    phases: Option<u32>,
    /// Write the timeline as a Chrome trace (JSON) to this file.
    #[arg(long)]
    trace: Option<PathBuf>,
    /// Plot each phase's time and its barrier's as an SVG to this file.
    #[arg(long)]
    svg: Option<PathBuf>,
    /// Print every phase, not only the summary.
    #[arg(long)]
    table: bool,
}

fn main() -> ExitCode {
    common::exit_code(run(&Args::parse()))
}

fn run(args: &Args) -> Result<(), common::AnyError> {
    let gpu = Gpu::new(0)?; // falls back to the CPU emulator without a CUDA GPU
    let emulated = gpu.backend() == Backend::Emulator;
    println!("{}", gpu.info().name);
    let n = args.n.unwrap_or(if emulated { 1 << 14 } else { 1 << 20 });
    let rounds = args.rounds.unwrap_or(if emulated { 100 } else { 1000 });
    let input: Vec<f32> = (0..n).map(|i| ((i * 7919) % 1000) as f32 / 1000.0).collect();

    let launch = common::launch(args.barrier, args.blocks, args.threads)
        .profile(true)
        .profile_phases(args.phases.unwrap_or(rounds));
    let mut a = gpu.upload(&input)?;
    let mut b = gpu.zeros::<f32>(n)?;
    let report = smooth::launch_with(&gpu, &launch, &mut a, &mut b, rounds)?;
    let result = gpu.download(if rounds.is_multiple_of(2) { &a } else { &b })?;
    let expected = smooth_reference(&input, rounds);
    if let Some(i) = (0..n).find(|&i| result[i].to_bits() != expected[i].to_bits()) {
        return Err(format!("mismatch at index {i}: {} vs the CPU's {}", result[i], expected[i]).into());
    }
    println!(
        "grid: {} blocks × {} threads, barrier: {}, kernel time {:.3} ms; verified: {n} elements",
        report.blocks,
        report.threads,
        report.barrier,
        report.gpu_time.as_secs_f64() * 1e3
    );
    let profile = report.profile.ok_or("the launch recorded no profile")?;
    println!("{profile}");
    if args.table {
        profile.write_table(std::io::stdout().lock())?;
    }
    if let Some(path) = &args.trace {
        profile.write_chrome_trace(std::fs::File::create(path)?)?;
        println!("wrote the Chrome trace to {}", path.display());
    }
    if let Some(path) = &args.svg {
        plot(&profile, path).map_err(|e| format!("plotting {}: {e}", path.display()))?;
        println!("wrote the plot to {}", path.display());
    }
    Ok(())
}

/// Bars at most: more phases than this are averaged in groups.
const MAX_BARS: usize = 400;
const SIZE: (u32, u32) = (1000, 480);
const LEFT: i32 = 90;
const RIGHT: i32 = 20;
const TOP: i32 = 60;
const BOTTOM: i32 = 70;
const WORK: RGBColor = RGBColor(66, 133, 244);
const BARRIER: RGBColor = RGBColor(244, 160, 0);

/// One bar: the mean span and barrier latency of a group of consecutive phases, in µs.
struct Bar {
    first_phase: u32,
    span: f64,
    barrier: f64,
}

/// The phases in at most [`MAX_BARS`] groups of equal size, and that size.
fn bars(phases: &[PhaseFigures]) -> (Vec<Bar>, usize) {
    let group = phases.len().div_ceil(MAX_BARS).max(1);
    let micros = |duration: std::time::Duration| duration.as_secs_f64() * 1e6;
    let bars = phases
        .chunks(group)
        .map(|chunk| Bar {
            first_phase: chunk[0].phase,
            span: chunk.iter().map(|phase| micros(phase.span)).sum::<f64>() / chunk.len() as f64,
            barrier: chunk.iter().filter_map(|phase| phase.barrier).map(|barrier| micros(barrier.latency)).sum::<f64>()
                / chunk.len() as f64,
        })
        .collect();
    (bars, group)
}

/// Each phase as a stacked bar: its span (work on the critical path) below, the latency of
/// the barrier that ends it above. Text goes straight to the SVG, so that no font is needed.
fn plot(profile: &PhaseProfile, path: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let (bars, group) = bars(profile.phases());
    let root = SVGBackend::new(path, SIZE).into_drawing_area();
    root.fill(&WHITE)?;
    let (width, height) = (SIZE.0 as i32, SIZE.1 as i32);
    let (plot_w, plot_h) = (width - LEFT - RIGHT, height - TOP - BOTTOM);
    let top = bars.iter().map(|bar| bar.span + bar.barrier).fold(0.0, f64::max);
    let scale = nice_ceiling(top);
    let y = |value: f64| TOP + plot_h - (value / scale * f64::from(plot_h)).round() as i32;
    let font = |size: f64| TextStyle::from(("sans-serif", size).into_font());
    let centered = |size: f64| font(size).pos(Pos::new(HPos::Center, VPos::Top));
    let title = format!(
        "{} on {} blocks, {} barrier: {} phases in {:.3} ms",
        profile.kernel(),
        profile.blocks().len(),
        profile.barrier(),
        profile.phases().len(),
        profile.total().as_secs_f64() * 1e3
    );
    root.draw_text(&title, &centered(22.0), (width / 2, 12))?;
    let per = if group > 1 { format!("µs per phase (each bar the mean of {group} phases)") } else { "µs".to_owned() };
    root.draw_text(&per, &font(16.0), (10, TOP - 24))?;
    let decimals = if scale >= 10.0 {
        0
    } else if scale >= 1.0 {
        1
    } else {
        3
    };
    for tick in 0..=4 {
        let value = scale * f64::from(tick) / 4.0;
        let at = y(value);
        root.draw(&PathElement::new(vec![(LEFT, at), (LEFT + plot_w, at)], RGBColor(225, 225, 225)))?;
        let label = font(15.0).pos(Pos::new(HPos::Right, VPos::Center));
        root.draw_text(&format!("{value:.decimals$}"), &label, (LEFT - 6, at))?;
    }
    let slot = f64::from(plot_w) / bars.len().max(1) as f64;
    for (index, bar) in bars.iter().enumerate() {
        let x0 = LEFT + (index as f64 * slot).round() as i32;
        let x1 = (LEFT + ((index + 1) as f64 * slot).round() as i32 - 1).max(x0 + 1);
        root.draw(&Rectangle::new([(x0, y(bar.span)), (x1, y(0.0))], WORK.filled()))?;
        root.draw(&Rectangle::new([(x0, y(bar.span + bar.barrier)), (x1, y(bar.span))], BARRIER.filled()))?;
    }
    let axis = TOP + plot_h;
    root.draw(&PathElement::new(vec![(LEFT, TOP), (LEFT, axis), (LEFT + plot_w, axis)], BLACK))?;
    let labels = bars.len().min(10);
    for label in 0..labels {
        let index = label * bars.len() / labels;
        let x = LEFT + ((index as f64 + 0.5) * slot).round() as i32;
        root.draw_text(&bars[index].first_phase.to_string(), &centered(15.0), (x, axis + 6))?;
    }
    root.draw_text("phase", &centered(16.0), (LEFT + plot_w / 2, axis + 26))?;
    let legend_y = height - 22;
    let legend = [(WORK, "phase (last leave before → last arrival)"), (BARRIER, "barrier (last arrival → last leave)")];
    let mut x = LEFT;
    for (color, text) in legend {
        root.draw(&Rectangle::new([(x, legend_y), (x + 14, legend_y + 12)], color.filled()))?;
        root.draw_text(text, &font(16.0).pos(Pos::new(HPos::Left, VPos::Top)), (x + 20, legend_y))?;
        x += 400;
    }
    root.present()?;
    Ok(())
}

/// The smallest 1, 2 or 5 times a power of ten at or above `value`, for the y axis.
fn nice_ceiling(value: f64) -> f64 {
    if value <= 0.0 || !value.is_finite() {
        return 1.0;
    }
    let power = 10f64.powf(value.log10().floor());
    [1.0, 2.0, 5.0, 10.0].iter().map(|step| step * power).find(|&top| top >= value).unwrap_or(10.0 * power)
}
