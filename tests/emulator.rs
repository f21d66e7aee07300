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

on_the_emulator!(
    saxpy_matches_the_cpu,
    fixed_phases_pass_data_between_blocks,
    many_phases_each_see_every_blocks_writes,
    the_library_smoothing_kernel_matches_the_cpu_bit_for_bit,
    shared_memory_block_sums_and_a_grid_total,
    atomics_add_min_max_exchange_and_compare_and_swap,
    warp_shuffles_reduce_scan_and_broadcast,
    u8_arithmetic_wraps_at_8_bits,
    i8_arithmetic_wraps_at_8_bits,
    u16_arithmetic_wraps_at_16_bits,
    i16_arithmetic_wraps_at_16_bits,
    u32_arithmetic_wraps_at_32_bits,
    i32_arithmetic_wraps_at_32_bits,
    u64_arithmetic_wraps_at_64_bits,
    i64_arithmetic_wraps_at_64_bits,
    f32_arithmetic_matches_the_cpu_bit_for_bit,
    f64_arithmetic_matches_the_cpu_bit_for_bit,
    bitonic_sorts_like_the_standard_library,
);

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
