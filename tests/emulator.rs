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
fn every_barrier_choice_means_the_same_barrier_on_the_cpu() {
    for &barrier in Barrier::ALL {
        checks::control_flow_read_from_device_memory(&Gpu::emulator(), Scale::Small, barrier);
    }
}
