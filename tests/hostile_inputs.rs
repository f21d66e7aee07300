//! The language's edge cases (`common/hostile.rs`) on the emulator, and their CUDA through NVRTC.

use common::hostile;

use gsync::__private::nvrtc_or_skip;
use gsync::prelude::*;
use std::time::Duration;

/// An emulator test per shared check.
macro_rules! on_the_emulator {
    ($($check:ident),* $(,)?) => {$(
        #[test]
        fn $check() {
            hostile::$check(&Gpu::emulator());
        }
    )*};
}

common::with_every_hostile_check!(on_the_emulator);

#[test]
fn a_kernel_that_never_ends_stops_at_its_deadline() {
    hostile::a_kernel_that_never_ends_stops_at_its_deadline(&Gpu::emulator(), Duration::from_millis(200));
}

/// Each kernel's body once per bounds setting, fused and split (a fused body is the same text
/// under every fused barrier; the cooperative and LBS fragments take turns).
#[test]
fn every_edge_kernel_compiles_fused_and_split() {
    if !nvrtc_or_skip() {
        return;
    }
    let mut failures = Vec::new();
    for (i, kernel) in hostile::all().into_iter().enumerate() {
        for (c, checks) in [true, false].into_iter().enumerate() {
            let spec = gsync::KernelSpec { bounds_checks: checks, ..*kernel };
            let fused = [Barrier::Cooperative, Barrier::Lbs][(i + c) % 2];
            for barrier in [fused, Barrier::MultiLaunch] {
                if barrier == Barrier::MultiLaunch && spec.split.error.is_some() {
                    continue;
                }
                let source = spec.source(barrier, spec.default_block_size());
                if let Err(e) = gsync::compile(&source, spec.name, (9, 0)) {
                    failures.push(format!("{} (checks {checks}, {barrier}): {e}", spec.name));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
