//! Fusion against splitting, for every shipped workload: the fused kernel with the default
//! launch (its shape tuned on the first launch), the fused kernel with the best shape of an
//! exhaustive sweep (blocks × threads × barrier), and the same source split into one launch per
//! phase, launched on the stream and replayed as a CUDA graph. The sweep's winner and the
//! default are then timed again in alternation, and those two medians fill their columns.
//! Every timed run is verified.
//!
//! ```text
//! cargo run --release --example fusion                        # every workload, GPU sizes
//! cargo run --release --example fusion -- --workload smooth --sizes 16,20,24
//! ```

mod common;

use clap::Parser;
use common::head_start::HeadStart;
use common::AnyError;
use gsync::kernels::bitonic;
use gsync::kernels::heat::{self, HeatError};
use gsync::kernels::scan::{self, ScanScratch};
use gsync::kernels::smith_waterman::{self as sw, Scoring};
use gsync::kernels::{empty_phases, smooth, smooth_reference};
use gsync::prelude::*;
use gsync::KernelSpec;
use rand::{rngs::StdRng, Rng, SeedableRng};
use std::process::ExitCode;
use std::time::Duration;

/// Compares the fused kernel with its split form on every workload.
#[derive(Parser)]
struct Args {
    /// Workloads: smooth, heat, heat-resident, empty-phases, bitonic, bitonic-pairs, scan,
    /// scan-single-pass, smith-waterman, smith-waterman-stripes (default: all).
    #[arg(long, value_delimiter = ',')]
    workload: Vec<String>,
    /// log₂ of the sizes (elements, keys, residues); default per workload.
    #[arg(long, value_delimiter = ',')]
    sizes: Vec<u32>,
    /// Timed runs per configuration after a warm-up; the median is reported.
    #[arg(long, default_value_t = 5)]
    reps: usize,
    /// Timed runs per configuration of the shape sweep.
    #[arg(long, default_value_t = 3)]
    sweep_reps: usize,
    /// Sweep the shapes on the CPU emulator too (a GPU always sweeps): slow, for checking the
    /// harness rather than for figures.
    #[arg(long)]
    sweep: bool,
    /// After the table, profile each workload's default launch once (`Launch::profile`): how
    /// its time splits into the phases' work and the barriers.
    #[arg(long)]
    profile: bool,
}

fn main() -> ExitCode {
    common::exit_code(run(&Args::parse()))
}

/// One configuration of a workload: how to launch it, and the workload's own knob
/// (Smith-Waterman's tile columns), if any.
#[derive(Clone, Debug)]
struct Config {
    launch: Launch,
    knob: Option<u32>,
}

impl Config {
    fn new(launch: Launch) -> Config {
        Config { launch, knob: None }
    }
}

/// A workload at one size: runs a configuration and verifies it.
trait Workload {
    /// What runs, at which size.
    fn label(&self) -> String;
    /// The kernel, for occupancy in the sweep.
    fn kernel(&self) -> &'static KernelSpec;
    /// The workload's own knob values to sweep besides blocks × threads × barrier.
    fn knobs(&self) -> Vec<Option<u32>> {
        vec![None]
    }
    /// Block sizes to sweep.
    fn threads(&self) -> Vec<u32> {
        vec![128, 256, 512, 1024]
    }
    /// Whether the sweep tries grids itself; else the workload's own (one block per unit of
    /// parallel work, at most the co-resident grid).
    fn sweeps_blocks(&self) -> bool {
        true
    }
    /// Whether the kernel has a split form: one with no `grid_sync()` has none.
    fn splits(&self) -> bool {
        true
    }
    /// Runs `config` once, checks the result, and returns the report. The launch gets the
    /// head start right before it; a library wrapper's, before the wrapper, whose uploads are
    /// queued behind the spin too.
    fn run(&mut self, gpu: &Gpu, config: &Config, head: &HeadStart) -> Result<LaunchReport, AnyError>;
}

fn run(args: &Args) -> Result<(), AnyError> {
    let gpu = Gpu::new(0)?;
    let emulated = gpu.backend() == Backend::Emulator;
    let info = gpu.info();
    println!("{} ({} SMs, sm_{}{})", info.name, info.sm_count, info.compute_capability.0, info.compute_capability.1);
    let chosen = |name: &str| args.workload.is_empty() || args.workload.iter().any(|w| w == name);
    let sizes = |default: &[u32]| if args.sizes.is_empty() { default.to_vec() } else { args.sizes.clone() };
    let mut workloads: Vec<Box<dyn Workload>> = Vec::new();
    if chosen("smooth") {
        for log2 in sizes(if emulated { &[10] } else { &[16, 20, 24] }) {
            let rounds = if emulated {
                20
            } else if log2 >= 24 {
                200
            } else {
                1000
            };
            workloads.push(Box::new(Smooth::new(1 << log2, rounds)));
        }
    }
    for (name, resident) in [("heat", false), ("heat-resident", true)] {
        if chosen(name) {
            for log2 in sizes(if emulated {
                &[10]
            } else if resident {
                &[16, 20, 22]
            } else {
                &[16, 20, 24]
            }) {
                let steps = if emulated {
                    20
                } else if log2 >= 24 {
                    200
                } else {
                    1000
                };
                workloads.push(Box::new(Heat::new(1 << (log2 / 2), steps, resident)));
            }
        }
    }
    if chosen("empty-phases") {
        workloads.push(Box::new(EmptyPhases { phases: if emulated { 20 } else { 1000 } }));
    }
    if chosen("bitonic") {
        for log2 in sizes(if emulated { &[12] } else { &[16, 20, 24] }) {
            workloads.push(Box::new(Bitonic::new(1 << log2)));
        }
    }
    if chosen("bitonic-pairs") {
        for log2 in sizes(if emulated { &[12] } else { &[16, 20, 24] }) {
            workloads.push(Box::new(BitonicPairs::new(1 << log2)));
        }
    }
    for (name, single_pass) in [("scan", false), ("scan-single-pass", true)] {
        if chosen(name) {
            for log2 in sizes(if emulated { &[14] } else { &[16, 20, 24] }) {
                workloads.push(Box::new(Scan::new(1 << log2, single_pass)));
            }
        }
    }
    for (name, stripes) in [("smith-waterman", false), ("smith-waterman-stripes", true)] {
        if chosen(name) {
            for log2 in sizes(if emulated { &[8] } else { &[15, 17] }) {
                workloads.push(Box::new(SmithWaterman::new(1 << log2, stripes)));
            }
        }
    }
    let head = &HeadStart::new(&gpu)?;
    println!();
    println!(
        "| workload | fused, default | fused, best of sweep | split, stream | split, graph | default ÷ best split |"
    );
    println!("|---|---:|---:|---:|---:|---:|");
    for workload in &mut workloads {
        row(&gpu, head, workload.as_mut(), args, emulated)?;
    }
    if args.profile {
        println!();
        println!("| workload (default launch, profiled) | kernel | phases' work | barriers | slowest phase work, mean | blocks' mean wait share |");
        println!("|---|---:|---:|---:|---:|---:|");
        for workload in &mut workloads {
            profile_row(&gpu, head, workload.as_mut())?;
        }
    }
    Ok(())
}

/// The most `grid_sync()` calls a profiled block records: more than any workload here crosses.
const PROFILED_PHASES: u32 = 4096;

/// Profiles one run of a workload's default launch and prints how its time splits.
fn profile_row(gpu: &Gpu, head: &HeadStart, workload: &mut dyn Workload) -> Result<(), AnyError> {
    let config = Config::new(Launch::new().profile(true).profile_phases(PROFILED_PHASES));
    let report = workload.run(gpu, &config, head)?;
    let Some(profile) = &report.profile else {
        println!("| {} | {} | – | – | – | (no profile) |", workload.label(), show(report.gpu_time));
        return Ok(());
    };
    let phases = profile.phases();
    let mean_slowest = phases.iter().map(|phase| phase.slowest_work).sum::<Duration>() / phases.len().max(1) as u32;
    println!(
        "| {} ({}, {} phases{}) | {} | {} | {} | {} | {:.0}% |",
        workload.label(),
        report.config(),
        phases.len(),
        if profile.is_truncated() { ", truncated" } else { "" },
        show(profile.total()),
        show(profile.total_span()),
        show(profile.total_barrier_latency()),
        show(mean_slowest),
        100.0 * profile.mean_wait_share(),
    );
    Ok(())
}

/// Measures and prints one workload's row.
fn row(gpu: &Gpu, head: &HeadStart, workload: &mut dyn Workload, args: &Args, emulated: bool) -> Result<(), AnyError> {
    let default_config = Config::new(Launch::new());
    // The sweep's fastest median is biased low (the least of many noisy medians), so its
    // winner and the default are timed again, in alternation, and those medians are compared.
    let winner = if emulated && !args.sweep { None } else { sweep(gpu, head, workload, args)? };
    let ((default, report), best) = match winner {
        Some(winner) => {
            let (default, best) = duel(gpu, head, workload, &default_config, &winner, args.reps)?;
            (default, Some((best.0, best.1, winner.knob)))
        }
        None => (time_runs(gpu, head, workload, &default_config, args.reps)?, None),
    };
    let default_cell = format!("{} ({}, {:?})", show(default), report.config(), report.choice);
    let best_cell = best.map_or("–".to_owned(), |(time, report, knob)| {
        let knob = knob.map_or(String::new(), |knob| format!(", knob {knob}"));
        format!("{} ({}{knob})", show(time), report.config())
    });
    let splits = workload.splits();
    let mut split = |graph: bool| -> Result<Option<Duration>, AnyError> {
        let launch = Launch::new().barrier(Barrier::MultiLaunch).graph(graph);
        let mut fastest: Option<Duration> = None;
        for threads in split_threads(workload) {
            let config = Config::new(match threads {
                Some(threads) => launch.clone().threads(threads),
                None => launch.clone(),
            });
            match time_runs(gpu, head, workload, &config, args.reps) {
                Ok((time, _)) => fastest = Some(fastest.map_or(time, |best| best.min(time))),
                Err(e) if refused(e.as_ref()) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(fastest)
    };
    let (stream, graph) = if splits { (split(false)?, split(true)?) } else { (None, None) };
    let best_split = [stream, graph].into_iter().flatten().min();
    let ratio =
        best_split.map_or("–".to_owned(), |split| format!("{:.2}", default.as_secs_f64() / split.as_secs_f64()));
    let cell = |time: Option<Duration>| time.map_or("–".to_owned(), show);
    println!("| {} | {default_cell} | {best_cell} | {} | {} | {ratio} |", workload.label(), cell(stream), cell(graph));
    Ok(())
}

/// Block sizes the split rows try: the kernel's own, and on a GPU 256 and 1024 too when the
/// kernel does not fix one.
fn split_threads(workload: &dyn Workload) -> Vec<Option<u32>> {
    if workload.kernel().default_threads != 0 {
        vec![None]
    } else {
        vec![Some(256), Some(1024)]
    }
}

/// The configuration with the fastest median over the shapes of blocks (1 to 16 per SM, and the
/// largest co-resident grid) × threads × barrier (LBS, ILBS, Relay, cooperative) × the
/// workload's knob.
fn sweep(gpu: &Gpu, head: &HeadStart, workload: &mut dyn Workload, args: &Args) -> Result<Option<Config>, AnyError> {
    let barriers = [Barrier::Lbs, Barrier::Ilbs { groups: None }, Barrier::Relay, Barrier::Cooperative];
    let sms = gpu.info().sm_count;
    let mut best: Option<(Duration, Config)> = None;
    for knob in workload.knobs() {
        for threads in workload.threads() {
            for barrier in barriers {
                let launch = Launch::new().threads(threads).barrier(barrier);
                let Ok(max) = gpu.max_coresident_blocks(workload.kernel(), &launch) else { continue };
                let mut grids: Vec<Option<u32>> = [1, 2, 3, 4, 6, 8, 12, 16]
                    .iter()
                    .map(|per_sm| per_sm * sms)
                    .filter(|&blocks| blocks <= max)
                    .chain([max])
                    .map(Some)
                    .collect();
                grids.dedup();
                if !workload.sweeps_blocks() {
                    grids = vec![None];
                }
                for blocks in grids {
                    let launch = blocks.map_or(launch.clone(), |blocks| launch.clone().blocks(blocks));
                    let config = Config { launch, knob };
                    match time_runs(gpu, head, workload, &config, args.sweep_reps) {
                        Ok((time, _)) => {
                            if best.as_ref().is_none_or(|(fastest, _)| time < *fastest) {
                                best = Some((time, config));
                            }
                        }
                        Err(e) if refused(e.as_ref()) => {}
                        Err(e) => return Err(e),
                    }
                }
            }
        }
    }
    Ok(best.map(|(_, config)| config))
}

/// A median kernel time, with the last report of the runs it came from.
type Timed = (Duration, LaunchReport);

/// Kernel time each side of a [`duel`] runs for at least, however short its kernel (up to
/// [`DUEL_MOST_REPS`] runs): a median of nine 100 µs runs still moves by ±5% between two timings
/// of the same launch, while the wait for the CPU's check between runs lowers the GPU's clocks.
const DUEL_TIME: Duration = Duration::from_millis(20);

/// The most runs a side of a [`duel`] makes to reach [`DUEL_TIME`].
const DUEL_MOST_REPS: usize = 201;

/// Warm-up runs of `a` and `b`, then verified runs of each in alternation, `reps` of them or
/// more until `a` has run for [`DUEL_TIME`]: their median kernel times, with their last reports.
fn duel(
    gpu: &Gpu,
    head: &HeadStart,
    workload: &mut dyn Workload,
    a: &Config,
    b: &Config,
    reps: usize,
) -> Result<(Timed, Timed), AnyError> {
    let mut last = (workload.run(gpu, a, head)?, workload.run(gpu, b, head)?);
    let each = (DUEL_TIME.as_secs_f64() / last.0.gpu_time.as_secs_f64().max(1e-9)).ceil() as usize;
    let reps = reps.max(each.min(DUEL_MOST_REPS));
    let (mut times_a, mut times_b) = (Vec::with_capacity(reps), Vec::with_capacity(reps));
    for _ in 0..reps {
        last.0 = workload.run(gpu, a, head)?;
        times_a.push(last.0.gpu_time);
        last.1 = workload.run(gpu, b, head)?;
        times_b.push(last.1.gpu_time);
    }
    let (last_a, last_b) = last;
    let median_a = common::median(times_a).unwrap_or(last_a.gpu_time);
    let median_b = common::median(times_b).unwrap_or(last_b.gpu_time);
    Ok(((median_a, last_a), (median_b, last_b)))
}

/// A warm-up run, then the median kernel time of `reps` verified runs, with the last report.
fn time_runs(
    gpu: &Gpu,
    head: &HeadStart,
    workload: &mut dyn Workload,
    config: &Config,
    reps: usize,
) -> Result<Timed, AnyError> {
    let mut report = workload.run(gpu, config, head)?;
    let mut times = Vec::with_capacity(reps);
    for _ in 0..reps {
        report = workload.run(gpu, config, head)?;
        times.push(report.gpu_time);
    }
    Ok((common::median(times).unwrap_or(report.gpu_time), report))
}

/// Whether `e` is a shape the barrier or GPU refuses (or, for the resident heat kernel, a block
/// size whose grid cannot hold the field): a cell to skip, not a failure.
fn refused(e: &(dyn std::error::Error + 'static)) -> bool {
    let not_resident = matches!(e.downcast_ref::<HeatError>(), Some(HeatError::NotCoresident { .. }));
    not_resident
        || common::barrier_refused(e)
        || matches!(
            e.downcast_ref::<Error>(),
            Some(Error::GridTooLarge { .. } | Error::CannotSplit { .. } | Error::SharedMemoryLimit { .. })
        )
}

fn show(time: Duration) -> String {
    let micros = time.as_secs_f64() * 1e6;
    if micros >= 10_000.0 {
        format!("{:.2} ms", micros / 1e3)
    } else {
        format!("{micros:.1} µs")
    }
}

/// Random `f32`s in [0, 1).
fn random_floats(n: usize, seed: u64) -> Vec<f32> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..n).map(|_| rng.gen::<f32>()).collect()
}

/// Repeated 3-point smoothing (`gsync::kernels::smooth`), verified bit for bit.
struct Smooth {
    input: Vec<f32>,
    rounds: u32,
    expected: Vec<f32>,
}

impl Smooth {
    fn new(n: usize, rounds: u32) -> Smooth {
        let input = random_floats(n, 7);
        let expected = smooth_reference(&input, rounds);
        Smooth { input, rounds, expected }
    }
}

impl Workload for Smooth {
    fn label(&self) -> String {
        format!("smooth 2^{} × {} rounds", self.input.len().ilog2(), self.rounds)
    }
    fn kernel(&self) -> &'static KernelSpec {
        &smooth::KERNEL
    }
    fn run(&mut self, gpu: &Gpu, config: &Config, head: &HeadStart) -> Result<LaunchReport, AnyError> {
        let mut a = gpu.upload(&self.input)?;
        let mut b = gpu.zeros::<f32>(self.input.len())?;
        head.give()?;
        let report = smooth::launch_with(gpu, &config.launch, &mut a, &mut b, self.rounds)?;
        let result = gpu.download(if self.rounds.is_multiple_of(2) { &a } else { &b })?;
        if result.iter().zip(&self.expected).any(|(x, y)| x.to_bits() != y.to_bits()) {
            return Err(format!("smooth: {config:?} differs from the CPU").into());
        }
        Ok(report)
    }
}

/// Phases that do next to nothing (`gsync::kernels::empty_phases`): the boundary's own cost.
struct EmptyPhases {
    phases: u32,
}

impl Workload for EmptyPhases {
    fn label(&self) -> String {
        format!("empty phases × {}", self.phases)
    }
    fn kernel(&self) -> &'static KernelSpec {
        &empty_phases::KERNEL
    }
    fn threads(&self) -> Vec<u32> {
        vec![32, 256, 1024]
    }
    fn run(&mut self, gpu: &Gpu, config: &Config, head: &HeadStart) -> Result<LaunchReport, AnyError> {
        let mut marker = gpu.zeros::<u32>(1)?;
        head.give()?;
        let report = empty_phases::launch_with(gpu, &config.launch, &mut marker, self.phases)?;
        if gpu.download(&marker)?[0] != self.phases - 1 {
            return Err(format!("empty phases: {config:?} left the wrong marker").into());
        }
        Ok(report)
    }
}

/// Bitonic sort of random `u32` keys (`gsync::kernels::bitonic::sort`, which runs
/// `sort_keys`: a block's tile is 16 keys per thread), verified against the CPU's sort.
struct Bitonic {
    keys: Vec<u32>,
    expected: Vec<u32>,
}

impl Bitonic {
    fn new(n: usize) -> Bitonic {
        let mut rng = StdRng::seed_from_u64(3);
        let keys: Vec<u32> = (0..n).map(|_| rng.gen()).collect();
        let mut expected = keys.clone();
        expected.sort_unstable();
        Bitonic { keys, expected }
    }
}

impl Workload for Bitonic {
    fn label(&self) -> String {
        format!("bitonic 2^{} keys", self.keys.len().ilog2())
    }
    fn kernel(&self) -> &'static KernelSpec {
        &bitonic::sort_keys::KERNEL
    }
    fn threads(&self) -> Vec<u32> {
        vec![64, 128, 256, 512]
    }
    fn sweeps_blocks(&self) -> bool {
        false
    }
    fn run(&mut self, gpu: &Gpu, config: &Config, head: &HeadStart) -> Result<LaunchReport, AnyError> {
        head.give()?;
        let sorted = bitonic::sort(gpu, &config.launch, &self.keys, None, false)?;
        if sorted.keys != self.expected {
            return Err(format!("bitonic: {config:?} did not sort").into());
        }
        Ok(sorted.report)
    }
}

/// Bitonic sort of random `u32` keys with values (`gsync::kernels::bitonic::sort` with values,
/// which runs `bitonic_sort`), verified against the CPU's stable sort: the keys in order, and
/// the values with them, equal keys keeping their order. The values are scrambled positions, so
/// a kernel that returned positions instead of values would fail.
struct BitonicPairs {
    keys: Vec<u32>,
    values: Vec<u32>,
    expected_keys: Vec<u32>,
    expected_values: Vec<u32>,
}

impl BitonicPairs {
    fn new(n: usize) -> BitonicPairs {
        let mut rng = StdRng::seed_from_u64(4);
        let keys: Vec<u32> = (0..n).map(|_| rng.gen()).collect();
        let values: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(0x9E37_79B9) ^ 0x5BD1_E995).collect();
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by_key(|&i| keys[i]); // stable
        let expected_keys = order.iter().map(|&i| keys[i]).collect();
        let expected_values = order.iter().map(|&i| values[i]).collect();
        BitonicPairs { keys, values, expected_keys, expected_values }
    }
}

impl Workload for BitonicPairs {
    fn label(&self) -> String {
        format!("bitonic pairs 2^{} keys", self.keys.len().ilog2())
    }
    fn kernel(&self) -> &'static KernelSpec {
        &bitonic::bitonic_sort::KERNEL
    }
    fn threads(&self) -> Vec<u32> {
        vec![256, 512, 1024]
    }
    fn sweeps_blocks(&self) -> bool {
        false
    }
    fn run(&mut self, gpu: &Gpu, config: &Config, head: &HeadStart) -> Result<LaunchReport, AnyError> {
        head.give()?;
        let sorted = bitonic::sort(gpu, &config.launch, &self.keys, Some(&self.values), false)?;
        if sorted.keys != self.expected_keys || sorted.values != self.expected_values {
            return Err(format!("bitonic pairs: {config:?} did not sort the pairs").into());
        }
        Ok(sorted.report)
    }
}

/// Inclusive prefix sums of random `u32` keys (`gsync::kernels::scan`), verified against the
/// CPU: the three-phase scan (`scan_three_phase`, phases fused by `grid_sync()`), or the
/// single pass with decoupled look-back (`scan_lookback`, no barrier, so no split form),
/// whose default launch is [`ScanScratch::launch`]'s (the co-resident grid, or one block per
/// tile where there are fewer tiles). The keys stay on the device between runs; the sums go
/// to a buffer zeroed before each run.
struct Scan {
    keys: Vec<u32>,
    expected: Vec<u32>,
    single_pass: bool,
    device: Option<ScanBuffers>,
}

/// A [`Scan`]'s device buffers, made on its first run.
struct ScanBuffers {
    keys: DeviceBuffer<u32>,
    out: DeviceBuffer<u32>,
    tile_sums: DeviceBuffer<u32>,
    scratch: ScanScratch,
}

impl Scan {
    fn new(n: usize, single_pass: bool) -> Scan {
        let mut rng = StdRng::seed_from_u64(9);
        let keys: Vec<u32> = (0..n).map(|_| rng.gen()).collect();
        let expected = scan::scan_reference(&keys);
        Scan { keys, expected, single_pass, device: None }
    }
}

impl Workload for Scan {
    fn label(&self) -> String {
        let form = if self.single_pass { "single pass" } else { "three phases" };
        format!("scan {form} 2^{} keys", self.keys.len().ilog2())
    }
    fn kernel(&self) -> &'static KernelSpec {
        if self.single_pass {
            &scan::scan_lookback::KERNEL
        } else {
            &scan::scan_three_phase::KERNEL
        }
    }
    fn splits(&self) -> bool {
        !self.single_pass
    }
    fn run(&mut self, gpu: &Gpu, config: &Config, head: &HeadStart) -> Result<LaunchReport, AnyError> {
        let n = self.keys.len();
        let buffers = match &mut self.device {
            Some(buffers) => buffers,
            None => self.device.insert(ScanBuffers {
                keys: gpu.upload(&self.keys)?,
                out: gpu.zeros(n)?,
                tile_sums: gpu.zeros(scan::tiles(n))?,
                scratch: ScanScratch::new(gpu, n)?,
            }),
        };
        gpu.fill_zeros(&mut buffers.out)?;
        head.give()?;
        let report = if self.single_pass {
            buffers.scratch.launch(gpu, &config.launch, &buffers.keys, &mut buffers.out)?
        } else {
            let ScanBuffers { keys, out, tile_sums, .. } = buffers;
            scan::scan_three_phase::launch_with(gpu, &config.launch, keys, out, tile_sums)?
        };
        if gpu.download(&buffers.out)? != self.expected {
            return Err(format!("scan: {config:?} differs from the CPU").into());
        }
        Ok(report)
    }
}

/// Smith-Waterman on random protein pairs (`gsync::kernels::smith_waterman`), verified
/// against the CPU reference: the tile kernel, whose knob is the tile's width in columns, or
/// the stripe kernel.
struct SmithWaterman {
    a: Vec<u8>,
    b: Vec<u8>,
    scoring: Scoring,
    expected: sw::LocalHit,
    stripes: bool,
}

impl SmithWaterman {
    fn new(n: usize, stripes: bool) -> SmithWaterman {
        let mut rng = StdRng::seed_from_u64(11);
        let scoring = Scoring::blosum62(sw::BLOSUM62_OPEN, sw::BLOSUM62_EXTEND).expect("BLOSUM62 is valid");
        let letters = scoring.alphabet().len() - 4; // the 20 amino acids, no ambiguity codes
        let mut sequence = || -> Vec<u8> { (0..n).map(|_| rng.gen_range(0..letters) as u8).collect() };
        let (a, b) = (sequence(), sequence());
        let workers = std::thread::available_parallelism().map_or(1, |cores| cores.get());
        let expected = sw::align_reference_parallel(&a, &b, &scoring, workers);
        SmithWaterman { a, b, scoring, expected, stripes }
    }
}

impl Workload for SmithWaterman {
    fn label(&self) -> String {
        let kernel = if self.stripes { "smith-waterman stripes" } else { "smith-waterman" };
        format!("{kernel} 2^{} × 2^{}", self.a.len().ilog2(), self.b.len().ilog2())
    }
    fn kernel(&self) -> &'static KernelSpec {
        if self.stripes {
            &sw::smith_waterman_stripes::KERNEL
        } else {
            &sw::smith_waterman::KERNEL
        }
    }
    fn knobs(&self) -> Vec<Option<u32>> {
        if self.stripes {
            vec![None]
        } else {
            vec![Some(128), Some(256), Some(512)]
        }
    }
    fn threads(&self) -> Vec<u32> {
        vec![32, 64, 128]
    }
    fn sweeps_blocks(&self) -> bool {
        false
    }
    fn run(&mut self, gpu: &Gpu, config: &Config, head: &HeadStart) -> Result<LaunchReport, AnyError> {
        head.give()?;
        let alignment = if self.stripes {
            sw::align_stripes(gpu, &config.launch, &self.a, &self.b, &self.scoring)?
        } else {
            let tile_cols = config.knob.unwrap_or(sw::DEFAULT_TILE_COLS);
            sw::align_tiled(gpu, &config.launch, &self.a, &self.b, &self.scoring, tile_cols)?
        };
        if alignment.hit() != self.expected {
            return Err(format!("smith-waterman: {config:?} found {:?}", alignment.hit()).into());
        }
        Ok(alignment.report)
    }
}

/// The 2-D heat equation (`gsync::kernels::heat`), verified bit for bit: the field ping-ponged
/// through global memory, or kept resident in shared memory (whose wrapper picks the grid, and
/// which cannot be split: shared memory does not outlive a launch).
struct Heat {
    n: usize,
    steps: u32,
    resident: bool,
    input: Vec<f32>,
    expected: Vec<f32>,
}

/// The heat equation's diffusion number: stable up to 0.25.
const HEAT_R: f32 = 0.2;

impl Heat {
    fn new(n: usize, steps: u32, resident: bool) -> Heat {
        let input = random_floats(n * n, 5);
        let workers = std::thread::available_parallelism().map_or(1, |cores| cores.get());
        let expected = heat::heat_reference_parallel(&input, n, steps, HEAT_R, workers).expect("a square field");
        Heat { n, steps, resident, input, expected }
    }
}

impl Workload for Heat {
    fn label(&self) -> String {
        let form = if self.resident { "resident" } else { "global" };
        format!("heat {form} {}² × {} steps", self.n, self.steps)
    }
    fn kernel(&self) -> &'static KernelSpec {
        if self.resident {
            &heat::heat_resident::KERNEL
        } else {
            &heat::heat_global::KERNEL
        }
    }
    fn sweeps_blocks(&self) -> bool {
        !self.resident
    }
    fn run(&mut self, gpu: &Gpu, config: &Config, head: &HeadStart) -> Result<LaunchReport, AnyError> {
        let run = if self.resident { heat::run_resident } else { heat::run_global };
        head.give()?;
        let heated = run(gpu, &config.launch, &self.input, self.n, self.steps, HEAT_R).map_err(|e| match e {
            HeatError::Gpu(error) => AnyError::from(error),
            other => AnyError::from(other),
        })?;
        if heated.field.iter().zip(&self.expected).any(|(x, y)| x.to_bits() != y.to_bits()) {
            return Err(format!("heat: {config:?} differs from the CPU").into());
        }
        Ok(heated.report)
    }
}
