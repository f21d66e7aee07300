//! Every GPU test's kernel on the CPU emulator, against the same CPU
//! references (`common::checks`), at small sizes: kernel semantics are
//! checked on every machine, GPU or not.

mod common;

use common::checks::{self, Scale};
use gsync::prelude::*;

/// An emulator test per shared check.
macro_rules! on_the_emulator {
    ($($check:ident),* $(,)?) => {$(
        #[test]
        fn $check() {
            checks::$check(&Gpu::emulator(), Scale::Small);
        }
    )*};
}

common::with_every_check!(on_the_emulator);

#[test]
fn an_out_of_bounds_read_returns_a_typed_error() {
    checks::an_out_of_bounds_read_returns_a_typed_error(&Gpu::emulator());
}

#[test]
fn unary_receivers_match_rust() {
    checks::unary_receivers_match_rust(&Gpu::emulator(), Barrier::Cooperative);
}

#[test]
fn deep_expressions_match_the_cpu() {
    checks::deep_expressions_match_the_cpu(&Gpu::emulator());
}

#[test]
fn a_zero_step_returns_a_typed_error() {
    checks::a_zero_step_returns_a_typed_error(&Gpu::emulator(), Barrier::Cooperative);
}

#[test]
fn every_barrier_choice_means_the_same_barrier_on_the_cpu() {
    for &barrier in Barrier::ALL {
        checks::control_flow_read_from_device_memory(&Gpu::emulator(), Scale::Small, barrier);
    }
}

#[test]
fn barriers_keep_their_grid_limits_on_the_cpu() {
    let gpu = Gpu::emulator();
    let mut marker = gpu.zeros::<u32>(1).unwrap();
    let launch = |barrier| Launch::new().barrier(barrier).threads(32);
    let result = gsync::kernels::empty_phases::launch_with(&gpu, &launch(Barrier::Lfs).blocks(33), &mut marker, 2);
    assert!(matches!(result, Err(Error::BarrierBlockLimit { requested: 33, max: 32, .. })), "{result:?}");
    let six = Barrier::Ilbs { groups: Some(6) };
    let result = gsync::kernels::empty_phases::launch_with(&gpu, &launch(six).blocks(5), &mut marker, 2);
    assert!(matches!(result, Err(Error::InvalidBarrier { .. })), "{result:?}");
    for (barrier, blocks) in [(Barrier::Lfs, 32), (six, 6)] {
        gsync::kernels::empty_phases::launch_with(&gpu, &launch(barrier).blocks(blocks), &mut marker, 2).unwrap();
    }
}
