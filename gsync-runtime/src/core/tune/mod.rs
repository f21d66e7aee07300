//! The configuration of a fused launch that leaves it open: remembered from an earlier launch,
//! measured now through the device's measuring hook, or the heuristic's; and the plan that
//! runs it.
//!
//! - `space`: the candidates, the heuristic, and the contest between measured candidates.

pub(crate) mod space;

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::barrier::{AutoTable, Barrier};
use crate::core::args::KernelArgs;
use crate::core::config::{ConfigChoice, LaunchConfig, SizeClass};
use crate::core::config_cache::{ConfigCache, ConfigKey};
use crate::core::dynamic_shared::{shared_class, DynamicShared};
use crate::core::error::{Error, ErrorKind, Result};
use crate::core::grid::CoResidency;
use crate::core::kernel::KernelSpec;
use crate::core::launch::Launch;
use crate::core::plan::resolve;
use crate::core::plan::{Device, KernelBuild, LaunchPlan};
use crate::core::shape_check::check_shape;
use space::{is_open, tuning_enabled, ConfigSpace, Contest, TUNE_VAR, TUNING_BUDGET};

/// The plan of one fused launch of `spec` with `launch` on `device`, over `args`. A launch that
/// must be co-resident and leaves its configuration open, on a device that tunes, gets one
/// first: remembered, measured, or the heuristic's.
///
/// # Safety
/// `args` must match the kernel's C parameter list, and name every buffer the kernel writes
/// with [`KernelArgs::slice_mut`]: candidates run on copies of those only.
pub(crate) unsafe fn plan(
    device: &dyn Device,
    spec: &KernelSpec,
    launch: &Launch,
    args: &KernelArgs<'_>,
    co_residency: CoResidency,
) -> Result<LaunchPlan> {
    let shared = args.shared();
    let as_asked = || resolve::fused(device, spec, launch, shared, co_residency, launch.untuned_choice());
    let Some(cache) = device.tuned().filter(|_| co_residency == CoResidency::Required) else {
        return as_asked();
    };
    let kernel = KernelBuild::new(spec, launch);
    // A kernel that reads per-axis builtins is never tuned: it must name its shape.
    check_shape(&kernel, launch, device.info().max_threads_per_block)?;
    if !is_open(launch) {
        return as_asked();
    }
    // The configuration names Auto's barrier for its grid; the report still says why, when the
    // table names it (a configuration remembered from an earlier table may not).
    let auto = auto_table(device, launch)?;
    let with = |config: LaunchConfig, choice| {
        let mut plan =
            resolve::fused(device, spec, &launch.clone().config(config), shared, CoResidency::Required, choice)?;
        if let Some(table) = &auto {
            plan.auto =
                Some(table.choose(device.info().sm_count, plan.grid.blocks)).filter(|why| why.barrier == plan.barrier);
        }
        Ok(plan)
    };
    let class = SizeClass::of(args.longest_buffer());
    let key = ConfigKey::new(&kernel, device.info(), launch, class, device.toolchain()?)
        .shared(shared_key(&kernel, launch, shared));
    if let Some(config) = cache.in_memory(&key) {
        return with(config, ConfigChoice::Remembered);
    }
    if let Some(config) = cache.on_disk(&key) {
        // A configuration stored by another run may no longer fit (another compiler, more
        // registers).
        match with(config, ConfigChoice::Remembered) {
            Ok(plan) => {
                let kept = cache.remember_first(&key, config);
                return if kept == config { Ok(plan) } else { with(kept, ConfigChoice::Remembered) };
            }
            Err(error) if refuses_config(&error) => cache.forget(&key),
            Err(error) => return Err(error),
        }
    }
    let space = ConfigSpace::new(&kernel, launch, device.info(), auto.clone());
    // SAFETY: the caller vouches for `args`.
    let tuned = if tuning_enabled(launch) { unsafe { tune(device, spec, launch, args, &space) }? } else { None };
    let Some((config, choice)) = tuned else {
        return match heuristic(device, &kernel, launch, &space, shared)? {
            Some(config) => with(config, ConfigChoice::Heuristic),
            // No block size fits: the launch as asked, which fails saying why.
            None => resolve::fused(device, spec, launch, shared, co_residency, ConfigChoice::Default),
        };
    };
    // A thread that asked `launch_config` meanwhile was promised its answer: that one stays.
    let kept = cache.put_first(&key, config);
    if kept != config {
        return with(kept, ConfigChoice::Remembered);
    }
    if let ConfigChoice::Tuned { candidates, took } = choice {
        eprintln!(
            "gsync: tuned `{}` for buffers of up to 2^{} elements on {}: {config} ({candidates} configurations in {:.2} s; \
             Launch::tune(false) or {TUNE_VAR}=off skips this)",
            kernel.name,
            class.log2(),
            device.info().name,
            took.as_secs_f64(),
        );
    }
    with(config, choice)
}

/// The table Auto chooses from, asked of the device only for a launch that asks for Auto
/// (on a GPU without a table of its generation, the first ask calibrates).
fn auto_table(device: &dyn Device, launch: &Launch) -> Result<Option<Arc<AutoTable>>> {
    (launch.selected_barrier() == Barrier::Auto).then(|| device.auto_table()).transpose()
}

/// The configuration a launch of `spec` with `launch` runs when its longest buffer has `len`
/// elements, known before anything is allocated; see
/// [`Gpu::launch_config_with`](crate::Gpu::launch_config_with). For an open launch on a device
/// that tunes: the remembered configuration, else the heuristic's, which from then on this
/// process's launches for that size class run instead of tuning.
pub(crate) fn promise(
    device: &dyn Device,
    spec: &KernelSpec,
    launch: &Launch,
    len: usize,
    shared: &DynamicShared,
) -> Result<LaunchConfig> {
    if launch.selected_barrier().descriptor().launch_mode == crate::barrier::LaunchMode::Split {
        return Ok(resolve::split(device, spec, launch, shared)?.config());
    }
    if let Some(cache) = device.tuned().filter(|_| is_open(launch)) {
        let kernel = KernelBuild::new(spec, launch);
        check_shape(&kernel, launch, device.info().max_threads_per_block)?;
        let key = ConfigKey::new(&kernel, device.info(), launch, SizeClass::of(len), device.toolchain()?)
            .shared(shared_key(&kernel, launch, shared));
        if let Some(config) = remembered_or_heuristic(device, &kernel, launch, cache, &key, shared)? {
            return Ok(config);
        }
    }
    let plan = resolve::fused(device, spec, launch, shared, CoResidency::Required, launch.untuned_choice())?;
    Ok(plan.config())
}

/// The remembered configuration of `key`, else the heuristic's, remembered from now on;
/// `None` when no block size fits (the launch fails).
fn remembered_or_heuristic(
    device: &dyn Device,
    kernel: &KernelBuild,
    launch: &Launch,
    cache: &ConfigCache,
    key: &ConfigKey<'_>,
    shared: &DynamicShared,
) -> Result<Option<LaunchConfig>> {
    if let Some(config) = cache.get(key) {
        return Ok(Some(config));
    }
    let config = heuristic(
        device,
        kernel,
        launch,
        &ConfigSpace::new(kernel, launch, device.info(), auto_table(device, launch)?),
        shared,
    )?;
    Ok(config.map(|config| cache.remember_first(key, config)))
}

/// The size class of the shared slices' bytes at the launch's default block size, which
/// tells apart the configurations of calls whose tiles differ; one that cannot be laid out has
/// a class of its own (its launch fails saying why).
fn shared_key(kernel: &KernelBuild, launch: &Launch, shared: &DynamicShared) -> u32 {
    if shared.is_empty() {
        return 0;
    }
    shared.layout(kernel, launch.threads_for(kernel)).map_or(u32::MAX, |layout| shared_class(layout.bytes))
}

/// The heuristic's configuration: the first block size that fits, with about 1024 threads per
/// SM.
fn heuristic(
    device: &dyn Device,
    kernel: &KernelBuild,
    launch: &Launch,
    space: &ConfigSpace,
    shared: &DynamicShared,
) -> Result<Option<LaunchConfig>> {
    for threads in space.thread_options() {
        if let Some(config) = space.heuristic(threads, blocks_per_sm(device, kernel, launch, threads, shared)?) {
            return Ok(Some(config));
        }
    }
    Ok(None)
}

/// Measures the candidates within [`TUNING_BUDGET`]; `None` when there was nothing to measure,
/// nothing to measure with (no memory for the copies), or a candidate's kernel faulted or
/// timed out (not for its configuration): the caller's own launch then runs untuned, with the
/// heuristic's configuration, and reports it. A failure of the driver or the installation is
/// returned.
///
/// # Safety
/// As [`plan`].
unsafe fn tune(
    device: &dyn Device,
    spec: &KernelSpec,
    launch: &Launch,
    args: &KernelArgs<'_>,
    space: &ConfigSpace,
) -> Result<Option<(LaunchConfig, ConfigChoice)>> {
    let mut contest = Contest::new(TUNING_BUDGET);
    // SAFETY: the caller vouches for `args`; every plan measured is of `spec`.
    let Some(mut measurer) = (unsafe { device.measurer(args) })? else {
        return Ok(None);
    };
    let kernel = KernelBuild::new(spec, launch);
    // What the next candidate is expected to take: the last one's measurement, and a
    // compilation (a new block size or barrier compiles a kernel) as long as the last took.
    let (mut expected, mut compile) = (Duration::ZERO, Duration::ZERO);
    'sizes: for threads in space.thread_options() {
        if !contest.has_time_for(expected + compile) {
            break;
        }
        let compiling = Instant::now();
        let resident = blocks_per_sm(device, &kernel, launch, threads, args.shared())?;
        compile = compile.max(compiling.elapsed());
        for config in space.candidates(threads, resident) {
            if !contest.has_time_for(expected + compile) {
                break 'sizes;
            }
            let started = Instant::now();
            let candidate = launch.clone().config(config);
            let planned =
                resolve::fused(device, spec, &candidate, args.shared(), CoResidency::Required, ConfigChoice::Requested);
            // SAFETY: the plan is of `spec`, which `args` match.
            match planned.and_then(|plan| unsafe { measurer.measure(&plan) }) {
                Ok(time) => {
                    contest.record(config, time);
                    expected = started.elapsed();
                }
                Err(error) if refuses_config(&error) => {}
                // The driver or the installation failed: the caller's launch would too.
                Err(error) if matches!(error.kind(), ErrorKind::Driver | ErrorKind::Installation) => return Err(error),
                // The kernel faulted or timed out on this input: its own launch reports it,
                // untuned, exactly as without tuning.
                Err(_) => return Ok(None),
            }
        }
    }
    Ok(contest.winner())
}

/// Whether a candidate failed only because this configuration cannot run (not co-resident,
/// beyond a barrier's limit, no cooperative launch): a configuration error, which the next
/// candidate may not have.
fn refuses_config(error: &Error) -> bool {
    error.kind() == ErrorKind::Configuration
}

/// Co-resident blocks per SM of `kernel` with `threads` threads per block and the shared
/// slices laid out for them, compiled for the launch's barrier (for Auto, LBS, which it
/// resolves to up to 4 blocks per SM); 0 when no block fits.
fn blocks_per_sm(
    device: &dyn Device,
    kernel: &KernelBuild,
    launch: &Launch,
    threads: u32,
    shared: &DynamicShared,
) -> Result<u32> {
    let barrier = match launch.selected_barrier() {
        Barrier::Auto => Barrier::Lbs,
        barrier => barrier,
    };
    let layout = match shared.layout(kernel, threads) {
        Ok(layout) => layout,
        Err(Error::SharedSliceLength { .. }) => return Ok(0),
        Err(error) => return Err(error),
    };
    match device.residency(&kernel.variant(barrier, threads), &layout) {
        Ok(resident) => Ok(resident.blocks_per_sm),
        Err(Error::SharedMemoryLimit { .. } | Error::DynamicSharedMemoryLimit { .. }) => Ok(0),
        Err(error) => Err(error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::kernel::tests::SMOOTH;
    use crate::test_support::FakeDevice;

    /// A GPU of 2 blocks per SM whose fastest configuration is 132 × 512 under LBS.
    fn tuning_gpu() -> FakeDevice {
        let times = |config: LaunchConfig| {
            let best = config.blocks == 132 && config.threads == 512;
            Duration::from_micros(if best { 10 } else { 20 + u64::from(config.blocks) })
        };
        FakeDevice { times: Some(times), ..FakeDevice::gpu(|_| 2) }
    }

    fn run(device: &FakeDevice, launch: &Launch) -> LaunchPlan {
        let args = KernelArgs::new();
        // SAFETY: the fake device launches nothing.
        unsafe { plan(device, &SMOOTH, launch, &args, CoResidency::Required) }.expect("planned")
    }

    #[test]
    fn an_open_launch_is_tuned_once_then_remembered() {
        let device = tuning_gpu();
        if !tuning_enabled(&Launch::new()) {
            return; // switched off for this process (GSYNC_TUNE=off)
        }
        let first = run(&device, &Launch::new());
        let best = LaunchConfig { blocks: 132, threads: 512, barrier: Barrier::Lbs };
        assert_eq!(first.config(), best);
        assert!(
            matches!(first.choice, ConfigChoice::Tuned { candidates, .. } if candidates as usize == device.measured.borrow().len())
        );
        assert!(device.measured.borrow().iter().any(|config| config.threads == 1024), "every block size is tried");
        let measured = device.measured.borrow().len();
        let second = run(&device, &Launch::new());
        assert_eq!((second.config(), second.choice), (best, ConfigChoice::Remembered));
        assert_eq!(device.measured.borrow().len(), measured, "nothing is measured again");
        assert_eq!(promise(&device, &SMOOTH, &Launch::new(), 0, &DynamicShared::none()).ok(), Some(best));
    }

    #[test]
    fn a_launch_that_names_its_configuration_or_turns_tuning_off_is_not_measured() {
        let device = tuning_gpu();
        let named = run(&device, &Launch::new().blocks(7).threads(64));
        assert_eq!((named.grid.blocks, named.grid.threads, named.choice), (7, 64, ConfigChoice::Requested));
        let grid_only = run(&device, &Launch::new().blocks(7));
        assert_eq!((grid_only.grid.threads, grid_only.choice), (256, ConfigChoice::Default));
        let off = run(&device, &Launch::new().tune(false));
        assert_eq!(off.choice, ConfigChoice::Heuristic);
        assert_eq!((off.grid.blocks, off.grid.threads), (132, 1024), "about 1024 threads per SM");
        assert!(device.measured.borrow().is_empty());
    }

    #[test]
    fn a_device_that_does_not_tune_plans_the_launch_as_asked() {
        let device = FakeDevice::gpu(|_| 2);
        let plan = run(&device, &Launch::new());
        assert_eq!((plan.config().blocks, plan.config().threads, plan.choice), (264, 256, ConfigChoice::Default));
    }

    #[test]
    fn a_promise_is_the_heuristic_s_configuration_and_holds() {
        let device = tuning_gpu();
        let promised = promise(&device, &SMOOTH, &Launch::new(), 0, &DynamicShared::none()).expect("a promise");
        assert_eq!((promised.blocks, promised.threads), (132, 1024));
        let args = KernelArgs::new();
        // SAFETY: the fake device launches nothing.
        let plan = unsafe { plan(&device, &SMOOTH, &Launch::new(), &args, CoResidency::Required) }.expect("planned");
        assert_eq!(plan.config(), promised, "a launch of the promised size class runs the promise, untuned");
        assert_eq!(plan.choice, ConfigChoice::Remembered);
        assert!(device.measured.borrow().is_empty());
    }
}
