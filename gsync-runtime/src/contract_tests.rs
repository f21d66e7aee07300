//! The runtime's side of the contract with the macro: what it reads of a kernel, and the CUDA
//! it wraps a kernel body in, are what `gsync-contract` defines (the macro's own tests check
//! that it writes the same).

use gsync_contract::{
    uses_half, Axes, RefusedBlockSizes, TrailingParam, BLOCK_SIZE_MACRO, HALF_MARKER, LAUNCH_BOUNDS_MACRO,
    MAX_BLOCK_SIZE, MAX_STATIC_SHARED_BYTES, PROFILE_PARAMETERS_MACRO, TRAILING_PARAMS,
};

use crate::barrier::Barrier;
use crate::core::shape_check::check_block_size;
use crate::core::{KernelSpec, SplitSpec, MAX_BLOCK_DIM};
use crate::emu::Emulator;

const BODY: &str = "extern \"C\" __global__ void k_(f16* a) {}\n";

static REFUSED: [RefusedBlockSizes; 2] = [
    RefusedBlockSizes { first: 1, last: 31, reason: "too small" },
    RefusedBlockSizes { first: 769, last: MAX_BLOCK_SIZE, reason: "too large" },
];

fn kernel(body: &'static str) -> KernelSpec {
    KernelSpec {
        name: "k",
        symbol: "k_",
        rust_signature: "fn k(a: &mut [f16])",
        checked_body: body,
        unchecked_body: body,
        bounds_checks: true,
        profile: false,
        arrays: &["a"],
        grid_syncs: 1,
        default_threads: 0,
        blocks_per_sm: 0,
        split: SplitSpec::NONE,
        assertions: &[],
        axes: Axes::NONE,
        refused_block_sizes: &REFUSED,
    }
}

#[test]
fn the_source_defines_the_block_size_macro_the_generated_code_reads() {
    let source = kernel(BODY).source(Barrier::Lbs, 96);
    assert!(source.contains(&format!("#define {BLOCK_SIZE_MACRO} 96\n")), "{source}");
}

#[test]
fn the_source_defines_the_launch_bounds_the_generated_code_reads() {
    let alone = kernel(BODY).source(Barrier::Lbs, 96);
    assert!(alone.contains(&format!("#define {LAUNCH_BOUNDS_MACRO} {BLOCK_SIZE_MACRO}\n")), "{alone}");
    let spanning = kernel(BODY).spanning_source(Barrier::Lbs, 96, 7);
    assert!(spanning.contains(&format!("#define {LAUNCH_BOUNDS_MACRO} {BLOCK_SIZE_MACRO}, 7\n")), "{spanning}");
}

#[test]
fn only_a_body_with_the_half_marker_gets_the_half_prelude() {
    let marked: &'static str = format!("{HALF_MARKER}{BODY}").leak();
    assert!(uses_half(marked));
    let with = kernel(marked).source(Barrier::Lbs, 64);
    let without = kernel(BODY).source(Barrier::Lbs, 64);
    assert!(with.contains("cuda_fp16.h") && !without.contains("cuda_fp16.h"));
}

#[test]
fn the_profile_hooks_define_the_parameters_after_the_trailing_ones() {
    for hooks in [include_str!("core/profile.cuh"), include_str!("core/no_profile.cuh")] {
        assert!(hooks.contains(&format!("#define {PROFILE_PARAMETERS_MACRO}")), "{hooks}");
    }
    let profiled = include_str!("core/profile.cuh");
    assert!(profiled.contains(&format!("#define {PROFILE_PARAMETERS_MACRO} , ")), "it follows the trailing ones");
}

#[test]
fn the_prelude_and_the_barriers_take_the_trailing_params_types() {
    let prelude = include_str!("core/prelude.cuh");
    let status = TrailingParam::Status.c_type().trim_end_matches('*');
    assert!(prelude.contains(&format!("struct {status} {{")), "the prelude defines the status word's type");
    assert!(prelude.contains("typedef unsigned int u32;"), "the barrier state's element type");
    for barrier in Barrier::ALL {
        let fragment = barrier.descriptor().cuda_fragment;
        let begin = format!("gsync_barrier_begin(unsigned int* {})", TrailingParam::BarrierState.name());
        assert!(fragment.is_empty() || fragment.contains(&begin), "{barrier:?}");
    }
    let next = TrailingParam::NextLaunch.c_type();
    assert!(prelude.contains(&format!("struct {next} {{")), "the prelude defines the next launch's type");
    assert_eq!(
        TRAILING_PARAMS.len(),
        3,
        "the barrier state, the status word and the next launch, as the backends pass them"
    );
}

#[test]
fn the_refused_block_sizes_and_the_bound_are_the_contracts() {
    assert!(RefusedBlockSizes::well_formed(&REFUSED));
    let spec = kernel(BODY);
    for threads in 1..=MAX_BLOCK_SIZE {
        let refused = RefusedBlockSizes::refusing(&REFUSED, threads).is_some();
        assert_eq!(check_block_size(&spec, threads).is_err(), refused, "block size {threads}");
    }
    assert_eq!((MAX_BLOCK_DIM.x, MAX_BLOCK_DIM.y), (MAX_BLOCK_SIZE, MAX_BLOCK_SIZE));
    let emulator = Emulator::new();
    assert_eq!(emulator.info().max_threads_per_block, MAX_BLOCK_SIZE);
    assert_eq!(emulator.info().max_shared_memory_per_block, MAX_STATIC_SHARED_BYTES);
}
