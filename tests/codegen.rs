//! Every kernel of the tests and the library compiles through NVRTC for
//! sm_80 and sm_90, with and without bounds checks, fused and split, and every
//! barrier's CUDA compiles with real kernels.
//! Needs NVRTC but no GPU; `scripts/test` installs it. Without NVRTC these
//! tests report a skip, unless GSYNC_REQUIRE_NVRTC=1 makes that a failure.
//!
//! A translation unit is the prelude, the barrier's fragment and the kernel's body
//! (`KernelSpec::source`), and the body of a fused kernel is the same text under every
//! fused barrier. So each kernel body is compiled once per bounds setting and
//! architecture, fused under one barrier and split under `MultiLaunch`, and the fused
//! barrier turns with the kernel's place in the list and the configuration: each
//! barrier's fragment meets ten kernels or more in every configuration. `Auto` is never
//! compiled for itself, since its source is Relay's (checked below). Only the kernels
//! whose names are chosen to meet generated names go through every barrier.

/// Kernels whose names meet C++, CUDA, the prelude and the generated code.
#[path = "ui/pass/hostile_names.rs"]
mod hostile_names;

use gsync::__private::nvrtc_or_skip;
use gsync::{Barrier, KernelSpec};

const ARCHS: [(u32, u32); 2] = [(8, 0), (9, 0)];

/// Bounds checks on and off, each for both architectures.
const CONFIGURATIONS: [(bool, (u32, u32)); 4] =
    [(true, ARCHS[0]), (true, ARCHS[1]), (false, ARCHS[0]), (false, ARCHS[1])];

/// The barriers that compile a fused kernel with their own fragment: all but `Auto`, whose
/// source is Relay's, and `MultiLaunch`, which compiles the split body.
fn fused_barriers() -> Vec<Barrier> {
    Barrier::ALL.iter().copied().filter(|b| !matches!(b, Barrier::Auto | Barrier::MultiLaunch)).collect()
}

/// The fused barrier whose turn it is for the `index`th kernel in configuration `c`.
fn fused_barrier(index: usize, c: usize) -> Barrier {
    let fused = fused_barriers();
    fused[(index + c) % fused.len()]
}

/// The same kernel with the other body selected.
fn with_checks(kernel: &KernelSpec, checks: bool) -> KernelSpec {
    KernelSpec { bounds_checks: checks, ..*kernel }
}

/// Compiles `spec` under `barrier` for `arch`; the failure, if any.
fn compile(spec: &KernelSpec, barrier: Barrier, arch: (u32, u32), what: &str) -> Option<String> {
    let source = spec.source(barrier, spec.default_block_size());
    let checks = spec.bounds_checks;
    gsync::compile(&source, spec.name, arch)
        .err()
        .map(|e| format!("{} ({what}checks {checks}, {barrier}, sm_{}{}): {e}", spec.name, arch.0, arch.1))
}

/// Compiles the `index`th kernel of a list once per bounds setting and architecture, fused
/// (under the barrier whose turn it is) and split; returns the failures.
fn compile_each_body(index: usize, kernel: &KernelSpec) -> Vec<String> {
    let mut failures = Vec::new();
    for (c, &(checks, arch)) in CONFIGURATIONS.iter().enumerate() {
        let spec = with_checks(kernel, checks);
        failures.extend(compile(&spec, fused_barrier(index, c), arch, ""));
        // A kernel without a split version has no split body: its `MultiLaunch` source would
        // be the prelude and the fragment alone, which every split kernel compiles too.
        if !spec.body_for(Barrier::MultiLaunch).is_empty() {
            failures.extend(compile(&spec, Barrier::MultiLaunch, arch, ""));
        }
    }
    failures
}

/// Compiles one kernel under every barrier with a text of its own, in every configuration;
/// returns the failures.
fn compile_every_barrier(_: usize, kernel: &KernelSpec) -> Vec<String> {
    let mut failures = Vec::new();
    for &(checks, arch) in &CONFIGURATIONS {
        let spec = with_checks(kernel, checks);
        for barrier in fused_barriers().into_iter().chain([Barrier::MultiLaunch]) {
            failures.extend(compile(&spec, barrier, arch, ""));
        }
    }
    failures
}

#[test]
fn auto_compiles_as_relay_so_the_matrix_leaves_it_out() {
    for kernel in common::kernels::all() {
        for checks in [true, false] {
            let spec = with_checks(kernel, checks);
            let (auto, relay) = (spec.source(Barrier::Auto, 128), spec.source(Barrier::Relay, 128));
            assert!(auto == relay, "{}: Auto's source is not Relay's", kernel.name);
        }
    }
}

#[test]
fn every_fused_barrier_meets_ten_kernels_or_more_in_every_configuration() {
    let (kernels, fused) = (common::kernels::all(), fused_barriers());
    assert_eq!(fused.len(), Barrier::ALL.len() - 2);
    for c in 0..CONFIGURATIONS.len() {
        for &barrier in &fused {
            let met = (0..kernels.len()).filter(|&i| fused_barrier(i, c) == barrier).count();
            assert!(met >= 10, "{barrier} meets {met} kernels in configuration {c}");
        }
    }
}

#[test]
fn every_kernel_compiles_for_sm80_and_sm90() {
    if !nvrtc_or_skip() {
        return;
    }
    let failures = compile_in_parallel(&common::kernels::all(), compile_each_body);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Compiles the `index`th kernel's profiled variant (the recording compiled in) under the
/// fused barrier whose turn it is, so that every barrier's recording hooks meet ten kernels
/// or more; returns the failures.
fn compile_profiled(index: usize, kernel: &KernelSpec) -> Vec<String> {
    let spec = KernelSpec { profile: true, ..with_checks(kernel, false) };
    compile(&spec, fused_barrier(index, 0), (9, 0), "profiled, ").into_iter().collect()
}

#[test]
fn every_kernel_compiles_with_a_profile() {
    if !nvrtc_or_skip() {
        return;
    }
    let failures = compile_in_parallel(&common::kernels::all(), compile_profiled);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn without_a_profile_no_recording_is_compiled_in() {
    for kernel in common::kernels::all() {
        let plain = with_checks(kernel, false).source(Barrier::Cooperative, 256);
        // The cooperative barrier reads no timer (the prelude's spin-wait watchdog has the only
        // read), and the hooks are empty macros.
        assert_eq!(plain.matches("globaltimer").count(), 1, "{}", kernel.name);
        assert!(
            plain.contains("mov.u64 \\t%0, %%globaltimer;") && !plain.contains("gsync_profile_t"),
            "{}",
            kernel.name
        );
        assert!(plain.contains("#define GSYNC_PROFILE_ARRIVE()\n"), "{}", kernel.name);
        assert!(!plain.contains("#define GSYNC_PROFILE\n"), "{}", kernel.name);
        let profiled = KernelSpec { profile: true, ..with_checks(kernel, false) }.source(Barrier::Cooperative, 256);
        assert!(profiled.contains("mov.u64 %0, %%globaltimer;"), "{}", kernel.name);
    }
}

/// Compiles kernels on all cores, each with `compile` and its place in the list; returns the
/// failures.
fn compile_in_parallel(kernels: &[&KernelSpec], compile: fn(usize, &KernelSpec) -> Vec<String>) -> Vec<String> {
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                scope.spawn(|| {
                    let mut failures = Vec::new();
                    loop {
                        let index = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(kernel) = kernels.get(index) else { break };
                        failures.extend(compile(index, kernel));
                    }
                    failures
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().expect("compiler thread")).collect()
    })
}

#[test]
fn kernels_named_like_cpp_cuda_and_prelude_names_compile() {
    if !nvrtc_or_skip() {
        return;
    }
    use hostile_names as h;
    let kernels = [
        &h::keywords::KERNEL,
        &h::math_names::KERNEL,
        &h::prelude_names::KERNEL,
        &h::generated_names::KERNEL,
        &h::größe::KERNEL,
        &h::module_names::KERNEL,
        &h::functions::KERNEL,
        &h::r#try::KERNEL,
        &h::sqrtf::KERNEL,
    ];
    assert!(h::prelude_names::KERNEL.split.error.is_none(), "the split version is compiled too");
    let failures = compile_in_parallel(&kernels, compile_every_barrier);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn cuda_source_names_the_kernel_and_its_barrier() {
    let source = gsync::kernels::smooth::cuda_source();
    assert!(
        source.contains("extern \"C\" __global__ void __launch_bounds__(GSYNC_LAUNCH_BOUNDS) smooth_("),
        "{source}"
    );
    assert!(source.contains("grid_sync() #1"), "{source}");
    assert!(source.contains("grid barrier: Relay"), "Auto's source is Relay's: {source}");
}

#[test]
fn a_broken_kernel_reports_the_log_and_numbered_source() {
    if !nvrtc_or_skip() {
        return;
    }
    let broken = KernelSpec {
        checked_body: "extern \"C\" __global__ void broken() { undeclared = 1; }",
        ..common::kernels::saxpy::KERNEL
    };
    let broken = with_checks(&broken, true);
    let error =
        gsync::compile(&broken.source(Barrier::Cooperative, 256), "broken", (9, 0)).expect_err("must not compile");
    let message = error.to_string();
    assert!(message.contains("undeclared"), "{message}");
    assert!(
        message.lines().any(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit())),
        "numbered source: {message}"
    );
}

#[test]
fn the_library_kernels_also_split_into_one_launch_per_phase() {
    let library = [
        &gsync::kernels::smooth::KERNEL,
        &gsync::kernels::empty_phases::KERNEL,
        &gsync::kernels::bitonic::bitonic_sort::KERNEL,
        &gsync::kernels::smith_waterman::smith_waterman::KERNEL,
        &gsync::kernels::smith_waterman::smith_waterman_stripes::KERNEL,
        &gsync::kernels::bitonic::sort_keys::KERNEL,
        &gsync::kernels::radix::radix_sort_u32::KERNEL,
        &gsync::kernels::radix::radix_sort_u64::KERNEL,
        &gsync::kernels::onesweep::onesweep_u32::KERNEL,
        &gsync::kernels::onesweep::onesweep_u64::KERNEL,
        &gsync::kernels::heat::heat_global::KERNEL,
    ];
    for kernel in library {
        assert_eq!(kernel.split.error, None, "{} cannot run under Barrier::MultiLaunch", kernel.name);
        assert!(!kernel.split.segments.is_empty(), "{}: {:?}", kernel.name, kernel.split.segments);
    }
}

#[test]
fn the_resident_heat_kernel_is_not_split_since_its_tile_lives_in_shared_memory() {
    let error = gsync::kernels::heat::heat_resident::KERNEL.split.error.expect("heat_resident cannot be split");
    assert!(error.contains("shared array `tile`"), "{error}");
    let error = gsync::kernels::heat::heat_columns::KERNEL.split.error.expect("heat_columns cannot be split");
    assert!(error.contains("`u`") || error.contains("`cells`"), "{error}");
}

#[test]
fn segments_that_recompute_hoisted_thread_indices_compile() {
    let kernel = &common::kernels::hoisted_indices::KERNEL;
    assert_eq!(kernel.split.error, None, "the hoisted lane, warp and block are recomputed, not refused");
    assert_eq!(kernel.split.segments.len(), 3);
    let source = kernel.source(Barrier::MultiLaunch, 256);
    let second = &source[source.find("hoisted_indices_segment_2_(").expect("segment 2")..];
    assert!(second.contains("const u32 lane_ = (threadIdx.x & 31u);"), "{second}");
    assert!(second.contains("const u32 from_ = "), "{second}");
    if !nvrtc_or_skip() {
        return;
    }
    for checks in [true, false] {
        let spec = with_checks(kernel, checks);
        for arch in ARCHS {
            let source = spec.source(Barrier::MultiLaunch, 80);
            if let Err(e) = gsync::compile(&source, spec.name, arch) {
                panic!("checks {checks}, sm_{}{}: {e}", arch.0, arch.1);
            }
        }
    }
}

#[test]
fn a_block_size_that_is_no_multiple_of_32_compiles_the_partial_warp_mask() {
    if !nvrtc_or_skip() {
        return;
    }
    let kernel = &common::warp_kernels::block_scan::KERNEL;
    let source = kernel.source(Barrier::Cooperative, 80);
    assert!(source.contains("#define GSYNC_BLOCK_SIZE 80"));
    if let Err(e) = gsync::compile(&source, kernel.name, (9, 0)) {
        panic!("{e}");
    }
}

/// The fused integer builtins are CUDA's DPX intrinsics, which CUDA 13 defines for every
/// architecture (DPX instructions from sm_90, two plain operations below), so one source
/// compiles from sm_75, CUDA 13's oldest, to Blackwell, and sm_110, where the prelude's
/// signed add forms take their software branch.
#[test]
fn the_fused_integer_builtins_compile_for_gpus_with_and_without_dpx() {
    use common::fused_int::{fused_i32, fused_u32};
    let signed = fused_i32::KERNEL.source(Barrier::Relay, 128);
    for call in ["__vimax3_s32(", "__vimin_s32_relu(", "__vimax3_s32_relu(", "gsync::add_max_relu("] {
        assert!(signed.contains(call), "{call}: {signed}");
    }
    let unsigned = fused_u32::KERNEL.source(Barrier::Relay, 128);
    assert!(unsigned.contains("__viaddmax_u32(") && unsigned.contains("__vimin3_u32("), "{unsigned}");
    if !nvrtc_or_skip() {
        return;
    }
    for kernel in [&fused_i32::KERNEL, &fused_u32::KERNEL] {
        for arch in [(7, 5), (8, 0), (8, 6), (9, 0), (10, 0), (11, 0), (12, 0)] {
            for checks in [true, false] {
                if let Some(failure) = compile(&with_checks(kernel, checks), Barrier::Relay, arch, "") {
                    panic!("{failure}");
                }
            }
        }
    }
}

#[test]
fn only_kernels_with_half_precision_include_cuda_fp16_and_they_compile() {
    use common::half_checks::{bf16_dot, bf16_ops, f16_ops, f16_stencil};
    for kernel in [&f16_ops::KERNEL, &bf16_ops::KERNEL, &f16_stencil::KERNEL, &bf16_dot::KERNEL] {
        for barrier in [Barrier::Relay, Barrier::MultiLaunch] {
            let source = kernel.source(barrier, 128);
            assert!(source.contains("#include <cuda_fp16.h>") && source.contains("typedef __half f16;"), "{source}");
        }
    }
    let plain = common::kernels::saxpy::KERNEL.source(Barrier::Relay, 128);
    assert!(!plain.contains("cuda_fp16.h") && !plain.contains("cuda_bf16.h"), "{plain}");
    // `every_kernel_compiles_for_sm80_and_sm90` compiles them.
    let every = common::kernels::all();
    for kernel in [&f16_ops::KERNEL, &bf16_ops::KERNEL, &f16_stencil::KERNEL, &bf16_dot::KERNEL] {
        assert!(every.iter().any(|k| std::ptr::eq(*k, kernel)), "{} is compiled with every kernel", kernel.name);
    }
}

/// The kernels of 2-D and 3-D launches and `BLOCK_SIZE`, at block sizes from 1 to 1024 and one
/// that is no multiple of 32, fused and split: constants in `GSYNC_BLOCK_SIZE` size their
/// arrays.
fn compile_at_block_sizes(_: usize, kernel: &KernelSpec) -> Vec<String> {
    let mut failures = Vec::new();
    for threads in [1, 96, 256, 1024] {
        if kernel.refused_block_sizes.iter().any(|r| (r.first..=r.last).contains(&threads)) {
            continue;
        }
        for barrier in [Barrier::Lbs, Barrier::MultiLaunch] {
            let source = with_checks(kernel, true).source(barrier, threads);
            if let Err(e) = gsync::compile(&source, kernel.name, (9, 0)) {
                failures.push(format!("{} ({threads} threads, {barrier}): {e}", kernel.name));
            }
        }
    }
    failures
}

#[test]
fn kernels_sized_by_the_block_size_compile_at_every_block_size() {
    if !nvrtc_or_skip() {
        return;
    }
    use common::dims::*;
    let kernels = [
        &transpose_twice::KERNEL,
        &grid_ids::KERNEL,
        &sized_block_sums::KERNEL,
        &wide_tile::KERNEL,
        &per_warp::warp_counts::KERNEL,
    ];
    let failures = compile_in_parallel(&kernels, compile_at_block_sizes);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn only_a_kernel_that_reads_a_per_axis_builtin_is_compiled_for_several_dimensions() {
    use common::dims::*;
    let multi = grid_ids::KERNEL.source(Barrier::Lbs, 64);
    assert!(multi.contains("#define GSYNC_MULTI_DIM\n") && multi.contains("threadIdx.y"), "{multi}");
    assert!(grid_ids::KERNEL.checked_body.contains("gsync_linear_thread()"));
    // Every other kernel keeps the `.x` components, as before shapes had axes.
    for kernel in common::kernels::all().into_iter().filter(|k| !k.axes.any()) {
        assert!(!kernel.source(Barrier::Lbs, 64).contains("#define GSYNC_MULTI_DIM"), "{}", kernel.name);
        for body in [kernel.checked_body, kernel.unchecked_body, kernel.split.checked_body] {
            assert!(!body.contains("gsync_linear_") && !body.contains("gsync_grid_blocks"), "{}", kernel.name);
        }
    }
    let sized = sized_block_sums::KERNEL.checked_body;
    assert!(sized.contains("[((usize)GSYNC_BLOCK_SIZE)]") && sized.contains("threadIdx.x"), "{sized}");
}

/// Blocks per SM of a kernel with `registers` per thread on an H100 or H200 (sm_90: 64K
/// registers and 2,048 threads per SM, registers given to warps 256 at a time), shared memory
/// aside: the driver's answer that the runtime asks on a GPU.
fn sm90_blocks_per_sm(registers: u32, threads: u32) -> u32 {
    let per_warp = (registers * 32).div_ceil(256) * 256;
    let by_registers = 65536 / (per_warp * threads.div_ceil(32)).max(1);
    by_registers.min(2048 / threads).min(32)
}

/// Conjugate gradients' fused kernel carries its iteration's values across every phase; left to
/// choose, ptxas kept it at the 32 registers of 8 blocks per SM and spilled them (the team's
/// build too, compiled for the same 8), where the segments of its split form, compiled alone,
/// spill nothing. The builds the runtime loads: for one GPU, the occupancy ptxas chose, with
/// spills only where stating it does not remove them (none under LBS at 256 threads, the
/// configuration profiled); for a PE of a team, no more spills than the one-GPU build.
#[test]
fn conjugate_gradients_fused_builds_spill_no_more_than_they_must() {
    if !nvrtc_or_skip() {
        return;
    }
    use gsync::__private::{fit_builds, Fitted};
    let cg = KernelSpec { bounds_checks: false, ..gsync::kernels::cg_team::solver::cg_strips::KERNEL };
    let jobs: Vec<(Barrier, u32)> =
        [Barrier::Lbs, Barrier::Relay].into_iter().flat_map(|b| [256, 512, 1024].map(|t| (b, t))).collect();
    let failures: Vec<String> = std::thread::scope(|scope| {
        let handles: Vec<_> = jobs
            .chunks(jobs.len().div_ceil(2))
            .map(|chunk| {
                let cg = &cg;
                scope.spawn(move || {
                    let mut failures = Vec::new();
                    for &(barrier, threads) in chunk {
                        let mut compile = |source: &str| {
                            gsync::compile(source, cg.name, (9, 0)).map(|compiled| (compiled.cubin, compiled.usage))
                        };
                        let mut occupancy = |fitted: &Fitted| Ok(sm90_blocks_per_sm(fitted.usage.registers, threads));
                        let split = gsync::compile(&cg.source(Barrier::MultiLaunch, threads), cg.name, (9, 0))
                            .expect("the segments compile");
                        assert_eq!(split.usage.spill_bytes, 0, "the segments spill at {threads} threads");
                        let free = gsync::compile(&cg.source(barrier, threads), cg.name, (9, 0))
                            .expect("the one-GPU kernel compiles");
                        let (alone, team) = fit_builds(cg, barrier, threads, true, &mut compile, &mut occupancy)
                            .expect("the builds compile");
                        let team = team.expect("a team's build");
                        let kept = |usage: &gsync::Usage| sm90_blocks_per_sm(usage.registers, threads);
                        let case = format!("{barrier}, {threads} threads");
                        if kept(&alone.usage) != kept(&free.usage) || alone.usage.spill_bytes > free.usage.spill_bytes {
                            failures.push(format!("{case}, one GPU: {:?} against {:?}", alone.usage, free.usage));
                        }
                        if (barrier, threads) == (Barrier::Lbs, 256) && alone.usage.spill_bytes != 0 {
                            failures.push(format!("{case}, one GPU spills: {:?}", alone.usage));
                        }
                        if team.usage.spill_bytes > alone.usage.spill_bytes {
                            failures.push(format!("{case}, a PE of a team: {:?} against {:?}", team.usage, alone.usage));
                        }
                        let (one, pe) = (sm90_blocks_per_sm(alone.usage.registers, threads), team.blocks_per_sm);
                        eprintln!(
                            "{barrier} {threads}: one GPU {} registers, bounds {:?}, {one} blocks/SM; team {} registers, bounds {pe:?}",
                            alone.usage.registers, alone.blocks_per_sm, team.usage.registers
                        );
                    }
                    failures
                })
            })
            .collect();
        handles.into_iter().flat_map(|handle| handle.join().expect("no panic")).collect()
    });
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The radix sorts' fused kernels, bounds checks off as a release build runs them, keep the
/// blocks per SM their `blocks_per_sm` asks for, spilling at most what each is known to, now that their pass loops
/// stay loops (unrolled, the compiler kept the `u32` counting sort at 80 registers only with
/// four copies of every pass; rolled and unbounded it took 110, 2 blocks per SM). The look-back
/// sort keeps 3 blocks (`u32`, 80 registers) and 2 (`u64`, 128). Its spill came in with
/// ranking by eight-bit `match_any` and padded tiles, which cut a third of its instructions
/// (2^24 keys 610 → 530 µs on an H200), and stayed with tiles of 20 keys per thread, whose
/// ranks travel two to a register (CUDA 13.0, LBS: 196 bytes for `u32`, 80 for `u64`; 2^24
/// keys 517 → 467 µs), and with 24 (156 bytes for `u32`, 316 for `u64`; 2^24 keys 433 → 416
/// µs, `u64` pairs 2% slower). The ULFS build, on which ptxas fails to allocate predicates for
/// `match_any`'s mask tests (C7600), compiles by the runtime's second try with each bit
/// tested at the sign (`GSYNC_MATCH_BY_SIGN`); it and the split form's segments keep
/// the blocks per SM; the segments keep the same spill bound. A spill inside the
/// loops over keys would pass this bound only where it is as small: 56 bytes of swapped
/// buffers' addresses once cost 2^24 pairs 772 µs against 746.
#[test]
fn the_radix_sorts_keep_their_blocks_per_sm() {
    if !nvrtc_or_skip() {
        return;
    }
    let kernels = [
        (&gsync::kernels::onesweep::onesweep_u32::KERNEL, 3, 256),
        (&gsync::kernels::onesweep::onesweep_u64::KERNEL, 2, 352),
        (&gsync::kernels::radix::radix_sort_u32::KERNEL, 3, 0),
        (&gsync::kernels::radix::radix_sort_u64::KERNEL, 2, 0),
    ];
    for (kernel, blocks, most_spilled) in kernels {
        assert_eq!(kernel.blocks_per_sm, blocks, "{}", kernel.name);
        let kernel = KernelSpec { bounds_checks: false, ..*kernel };
        for barrier in [Barrier::Lbs, Barrier::Ulfs, Barrier::MultiLaunch] {
            let source = kernel.source(barrier, 256);
            let compiled = gsync::compile(&source, kernel.name, (9, 0))
                .unwrap_or_else(|e| panic!("{} under {barrier}: {e}", kernel.name));
            let usage = compiled.usage;
            assert!(sm90_blocks_per_sm(usage.registers, 256) >= blocks, "{} under {barrier}: {usage:?}", kernel.name);
            // (Under ULFS, whose barrier holds more values, the counting sort spills 12 bytes.)
            if barrier != Barrier::Ulfs {
                assert!(usage.spill_bytes <= most_spilled, "{} under {barrier}: {usage:?}", kernel.name);
            }
        }
    }
}

/// A team's build of the look-back sort under ULFS links: NVRTC to LTO-IR, then nvJitLink with
/// NVSHMEM's device library, through the same second try by sign as a one-GPU compile.
#[test]
fn the_radix_sort_links_for_a_team_under_ulfs() {
    if !nvrtc_or_skip() {
        return;
    }
    let Some(nvshmem) = gsync::__private::nvshmem::nvshmem_or_skip() else {
        return;
    };
    for kernel in [&gsync::kernels::onesweep::onesweep_u32::KERNEL, &gsync::kernels::onesweep::onesweep_u64::KERNEL] {
        let kernel = KernelSpec { bounds_checks: false, ..*kernel };
        let source = kernel.spanning_source(Barrier::Ulfs, 256, kernel.blocks_per_sm);
        let linked = gsync::__private::nvshmem::link_kernel(nvshmem, &source, kernel.name, (9, 0));
        let cubin = linked.unwrap_or_else(|e| panic!("{} for a team under ULFS: {e}", kernel.name)).cubin;
        assert_eq!(&cubin[..4], b"\x7fELF", "{}: a CUBIN", kernel.name);
    }
}
