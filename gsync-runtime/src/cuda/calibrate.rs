//! Auto's table for a GPU whose generation gsync has none for: measured once, in about a
//! second, and kept beside the kernel cache, so that later processes read it instead.
//!
//! At each grid of 1, 2, 4, … blocks per SM (of 64 threads, so that up to 32 fit an SM), every
//! device barrier that takes the grid runs a kernel of nothing but `grid_sync()` calls twice,
//! with few and with many phases; the difference, per phase, is the barrier's cost at that
//! grid. The fastest at each grid make the table's rows.

use std::path::PathBuf;
use std::sync::{Arc, PoisonError};
use std::time::{Duration, Instant};

use crate::barrier::{AutoSource, AutoTable, Barrier};
use crate::core::args::KernelArgs;
use crate::core::dims::Axes;
use crate::core::disk::{cache_dir_from_env, read_entry, write_atomically};
use crate::core::error::{Error, ErrorKind, Result};
use crate::core::grid::CoResidency;
use crate::core::kernel::{KernelSpec, SplitSpec};
use crate::core::launch::Launch;
use crate::core::tune;
use crate::cuda::context::CudaGpu;
use crate::cuda::fused;

/// The phases kernel, written as `#[grid_phases]` writes kernels.
const PHASES: &str = r#"
extern "C" __global__ void __launch_bounds__(GSYNC_LAUNCH_BOUNDS) gsync_calibrate_phases(
    u32 phases,
    u32* __restrict__ gsync_barrier_state, gsync_status_t* __restrict__ gsync_status, const gsync_next_launch_t gsync_next_launch) {
    gsync::prepare_next_launch(gsync_next_launch);
    gsync_barrier_t gsync_barrier = gsync_barrier_begin(gsync_barrier_state);
    for (u32 phase = 0u; phase < phases; ++phase) {
        gsync_grid_sync(gsync_barrier, gsync_status);
    }
}
"#;

const PHASES_KERNEL: KernelSpec = KernelSpec {
    name: "gsync_calibrate_phases",
    symbol: "gsync_calibrate_phases",
    rust_signature: "fn gsync_calibrate_phases(phases: u32)",
    checked_body: PHASES,
    unchecked_body: PHASES,
    bounds_checks: false,
    profile: false,
    arrays: &[],
    grid_syncs: 1,
    default_threads: 0,
    blocks_per_sm: 0,
    split: SplitSpec {
        checked_body: "",
        unchecked_body: "",
        segments: &[],
        error: Some("it measures grid barriers"),
        reads_device: false,
    },
    assertions: &[],
    axes: Axes::NONE,
    refused_block_sizes: &[],
};

/// Threads per block: few enough for 32 blocks per SM.
const THREADS: u32 = 64;
/// The grids measured, in blocks per SM.
const LEVELS: [u32; 6] = [1, 2, 4, 8, 16, 32];
/// The barriers tried at each grid: those that take any grid (not the cooperative barrier,
/// which needs a launch not every GPU has, nor LFS, whose grid is at most its block size), the
/// simplest first.
const CANDIDATES: [Barrier; 4] = [Barrier::Lbs, Barrier::Ilbs { groups: None }, Barrier::Ulfs, Barrier::Relay];
/// Phases of the short and the long run.
const FEW: u32 = 8;
const MANY: u32 = 72;
/// Runs of each, the median taken.
const RUNS: usize = 3;
/// The share by which one barrier's cost must beat another's to count as faster.
const NOISE: f64 = 0.03;

/// The table Auto chooses from on `gpu`: its generation's own, else one calibrated on it
/// (read from the cache, or measured now, on first use). A PE of a team, or a stream being
/// captured, cannot run the calibration's kernels: they borrow Hopper's table, which a capture
/// does not keep.
pub(crate) fn auto_table(gpu: &CudaGpu) -> Result<Arc<AutoTable>> {
    // Held while calibrating, so that two threads do not time each other's kernels. No
    // calibration launch asks for the table: each names its barrier.
    let mut slot = gpu.auto_slot().lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(table) = &*slot {
        return Ok(table.clone());
    }
    let table = match AutoTable::built_in(gpu.info().compute_capability) {
        Some(table) => table,
        None if gpu.team().is_some() => {
            AutoTable::borrowed("a PE of a team does not calibrate (its kernels would span the team)".into())
        }
        None if gpu.capturing() => {
            let reason = "the first Auto launch on this GPU was recorded into a graph, which cannot calibrate";
            return Ok(Arc::new(AutoTable::borrowed(reason.into())));
        }
        None => match load_or_calibrate(gpu) {
            Ok(table) => table,
            Err(error) if error.kind() == ErrorKind::Driver => return Err(error),
            Err(error) => AutoTable::borrowed(format!("calibrating failed: {error}")),
        },
    };
    Ok(slot.insert(Arc::new(table)).clone())
}

/// Measures Auto's table on `gpu` now, keeps it in the cache, and uses it from now on.
pub(crate) fn calibrate_auto(gpu: &CudaGpu) -> Result<Arc<AutoTable>> {
    if gpu.team().is_some() {
        return Err(Error::InvalidTeam {
            reason: "Gpu::calibrate_auto measures one GPU alone, which a PE's launches cannot; calibrate \
                     on a Gpu opened outside the team (Gpu::new), whose table the cache then keeps"
                .into(),
        });
    }
    gpu.refuse_capturing("calibrating Auto's table, which runs and times kernels")?;
    let mut slot = gpu.auto_slot().lock().unwrap_or_else(PoisonError::into_inner);
    Ok(slot.insert(Arc::new(calibrate(gpu, table_path(gpu))?)).clone())
}

/// The table of `gpu`: read from the cache, or measured now and kept there.
fn load_or_calibrate(gpu: &CudaGpu) -> Result<AutoTable> {
    let path = table_path(gpu);
    if let Some(path) = &path {
        let cached = read_entry(path, 4096).and_then(|bytes| String::from_utf8(bytes).ok());
        let source = AutoSource::Cached { path: path.clone() };
        if let Some(table) = cached.and_then(|text| AutoTable::from_text(&text, source)) {
            return Ok(table);
        }
    }
    calibrate(gpu, path)
}

/// Measures the table of `gpu` now, and keeps it at `path` when every grid was measured
/// (up to the first that no barrier takes). A driver error (a lost context) is returned.
fn calibrate(gpu: &CudaGpu, path: Option<PathBuf>) -> Result<AutoTable> {
    let started = Instant::now();
    let sm_count = gpu.info().sm_count.max(1);
    let mut fastest = Vec::new();
    // Whether a measurement failed otherwise than by a refused grid: the table is used, not kept.
    let mut doubtful = false;
    for blocks_per_sm in LEVELS {
        let blocks = blocks_per_sm.saturating_mul(sm_count);
        let mut best: Option<(Duration, Barrier)> = None;
        for barrier in CANDIDATES {
            let cost = match phase_cost(gpu, barrier, blocks) {
                Ok(Some(cost)) => cost,
                // Many phases no slower than few: noise, not a cost.
                Ok(None) => {
                    doubtful = true;
                    continue;
                }
                Err(error) if error.kind() == ErrorKind::Driver => return Err(error),
                // A barrier that refuses the grid (not co-resident with its code) is no
                // candidate there.
                Err(error) => {
                    doubtful |= error.kind() != ErrorKind::Configuration;
                    continue;
                }
            };
            if best.is_none_or(|(least, _)| clearly_faster(cost, least)) {
                best = Some((cost, barrier));
            }
        }
        match best {
            Some((_, barrier)) => fastest.push((blocks_per_sm, barrier)),
            None => break,
        }
    }
    let kept = path.filter(|path| {
        let table = AutoTable::from_levels(&fastest, AutoSource::Calibrated { cached: None });
        !doubtful && table.is_some_and(|table| write_atomically(path, &[table.to_text().as_bytes()]).is_ok())
    });
    let reason = || format!("calibrating it measured no barrier ({:.2} s)", started.elapsed().as_secs_f64());
    Ok(AutoTable::from_levels(&fastest, AutoSource::Calibrated { cached: kept })
        .unwrap_or_else(|| AutoTable::borrowed(reason())))
}

/// Whether `cost` beats `least` by more than the runs' noise: between barriers within it, the
/// one tried first stays (the candidates go from the simplest), so that two that run the same
/// code at a grid (Relay runs LBS's on small ones) do not alternate from row to row.
fn clearly_faster(cost: Duration, least: Duration) -> bool {
    cost.as_secs_f64() < least.as_secs_f64() * (1.0 - NOISE)
}

/// One `grid_sync()`'s cost with `barrier` on a grid of `blocks`: the median run of many
/// phases less that of few, per phase between; `None` when many took no longer than few.
fn phase_cost(gpu: &CudaGpu, barrier: Barrier, blocks: u32) -> Result<Option<Duration>> {
    let launch = Launch::new()
        .blocks(blocks)
        .threads(THREADS)
        .barrier(barrier)
        .tune(false)
        .watchdog(Some(Duration::from_secs(1)));
    let median = |phases: u32| -> Result<Duration> {
        let mut times = Vec::with_capacity(RUNS);
        for _ in 0..RUNS {
            let mut args = KernelArgs::new();
            args.scalar(phases);
            // SAFETY: the kernel takes one `u32`, then the contract's trailing parameters.
            let plan = unsafe { tune::plan(gpu, &PHASES_KERNEL, &launch, &args, CoResidency::Required) }?;
            // SAFETY: as above; the plan is of the phases kernel.
            let report = unsafe { fused::launch(gpu, plan, &args) }?;
            times.push(report.gpu_time);
        }
        times.sort();
        Ok(times[RUNS / 2])
    };
    median(FEW)?; // compiles and loads the kernel for this barrier
    let (few, many) = (median(FEW)?, median(MANY)?);
    Ok((many > few).then(|| (many - few) / (MANY - FEW)))
}

/// Where `gpu`'s table is kept: a file per GPU model and SM count in the cache directory.
fn table_path(gpu: &CudaGpu) -> Option<PathBuf> {
    let info = gpu.info();
    let model: String =
        info.name.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' }).collect();
    let (major, minor) = info.compute_capability;
    let file = format!("{model}-sm{major}{minor}-{}sms.txt", info.sm_count);
    cache_dir_from_env().map(|dir| dir.join("auto-barrier").join(file))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_phases_kernel_takes_the_contract_s_trailing_parameters() {
        for param in gsync_contract::TRAILING_PARAMS {
            assert!(PHASES.contains(&param.to_string()), "{param}");
        }
        assert!(PHASES_KERNEL.prepares_next_launch(Barrier::Lbs));
        assert!(CANDIDATES.iter().all(|barrier| barrier.takes_any_grid()));
        assert!(LEVELS.windows(2).all(|pair| pair[0] < pair[1]));
        assert_eq!(CANDIDATES[0], Barrier::Lbs, "the simplest first: it stays within the noise");
    }

    #[test]
    fn a_barrier_must_beat_the_best_by_more_than_the_noise() {
        let micros = Duration::from_micros;
        assert!(!clearly_faster(micros(99), micros(100)), "within the noise");
        assert!(clearly_faster(micros(90), micros(100)));
        assert!(!clearly_faster(micros(110), micros(100)));
    }

    #[test]
    fn the_phases_kernel_compiles_with_every_candidate_for_sm80_and_sm90() {
        if !crate::cuda::discover::nvrtc_or_skip() {
            return;
        }
        for barrier in CANDIDATES {
            for arch in [(8, 0), (9, 0)] {
                let source = PHASES_KERNEL.source(barrier, THREADS);
                if let Err(error) = crate::cuda::compile::compile(&source, PHASES_KERNEL.name, arch) {
                    panic!("{barrier} on sm_{}{}: {error}", arch.0, arch.1);
                }
            }
        }
    }
}
