//! Kernels, CPU references and checks shared by the codegen test (NVRTC,
//! everywhere), the emulator tests and the GPU tests: one library crate, so that
//! each `#[grid_phases]` kernel is expanded and compiled once, not once per test
//! binary.

pub mod async_copies;
pub mod barrier_checks;
pub mod checks;
pub mod chunks;
pub mod communication;
pub mod deep;
pub mod dims;
pub mod functions;
pub mod fused_int;
pub mod half_checks;
pub mod heat_checks;
pub mod hostile;
pub mod kernels;
pub mod pending;
pub mod radix;
pub mod shared_slice_checks;
pub mod shared_slice_kernels;
pub mod sort_checks;
pub mod sw_checks;
pub mod swaps;
pub mod team;
pub mod team_ranges;
pub mod tuning;
pub mod warp_checks;
pub mod warp_kernels;

/// Calls `$runner!` with the name of every shared check (`checks::NAME(gpu, scale)`),
/// so that the GPU and the emulator test the same list: the quick GPU tier's checks, then
/// the full tier's.
#[macro_export]
macro_rules! with_every_check {
    ($runner:ident) => {
        $crate::with_quick_checks!($runner);
        $crate::with_full_tier_checks!($runner);
    };
}

/// The first CUDA GPU, for the GPU tests.
pub fn cuda_gpu() -> gsync::Gpu {
    gsync::Gpu::cuda(0).expect("a CUDA GPU")
}

/// One ignored GPU test per named shared check, at full size: the runner that the GPU tiers
/// hand `with_quick_checks!` and `with_full_tier_checks!`.
#[macro_export]
macro_rules! on_the_gpu {
    ($($check:ident),* $(,)?) => {$(
        #[test]
        #[ignore = "needs a CUDA GPU"]
        fn $check() {
            $crate::checks::$check(&$crate::cuda_gpu(), $crate::checks::Scale::Full);
        }
    )*};
}

/// Calls `$runner!` with the checks of the quick GPU tier (`tests/gpu_kernels.rs`): among
/// them every library kernel, at full size.
#[macro_export]
macro_rules! with_quick_checks {
    ($runner:ident) => {
        $runner!(
            saxpy_matches_the_cpu,
            fixed_phases_pass_data_between_blocks,
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
            fused_integer_builtins_wrap_their_sums_like_plain_rust,
            f32_arithmetic_matches_the_cpu_bit_for_bit,
            f64_arithmetic_matches_the_cpu_bit_for_bit,
            bitonic_sorts_like_the_standard_library,
            the_radix_sort_sorts_every_key_type_stably,
            the_radix_sort_runs_any_grid_over_many_tiles,
            the_radix_sort_copies_the_digits_every_key_shares,
            the_radix_sort_keeps_the_largest_keys_of_a_partial_tile,
            the_library_sort_keeps_one_order_across_its_kernels,
            the_sorts_refuse_inputs_they_cannot_take,
            smith_waterman_matches_the_cpu_reference,
            smith_waterman_scores_the_ssw_example_21,
            smith_waterman_handles_empty_and_single_residue_sequences,
            smith_waterman_aligns_sequences_read_from_fasta,
            smith_waterman_breaks_ties_by_row_major_order,
            smith_waterman_refuses_letters_outside_the_alphabet,
            smith_waterman_stripes_refuse_blocks_their_scores_overflow,
            heat_global_matches_the_reference_bit_for_bit,
            heat_resident_matches_the_reference_bit_for_bit,
            heat_resident_exchanges_halos_between_blocks,
            heat_resident_refuses_fields_it_cannot_hold,
            a_generic_kernel_reduces_every_element_type,
            device_functions_return_early_and_short_circuit,
            a_device_function_holds_a_grid_barrier,
            a_device_function_updates_a_threads_own_arrays,
            a_two_level_block_scan_runs_shuffles_in_warp_zero_only,
            a_stable_radix_rank_is_one_match_and_a_popcount,
            match_any_of_narrow_values_matches_the_cpu,
            float_atomic_max_and_min_skip_nan_and_order_signed_zeros,
            match_on_integers_and_bools_matches_rust,
            a_failed_assert_returns_its_message_and_line,
            a_thread_that_fails_an_assert_leaves_its_block_barrier,
            a_failed_assert_eq_stops_the_grid_at_the_next_grid_sync,
            debug_asserts_follow_the_bounds_check_setting,
            blocks_pass_messages_with_release_and_acquire,
            many_blocks_contending_for_a_lock_lose_no_update,
            atomics_take_every_memory_ordering,
            both_scans_match_the_cpu,
            the_look_back_crosses_windows_of_sums,
            the_single_pass_refuses_states_of_one_word_per_tile,
            a_ping_pong_loop_swaps_its_slices,
            swapped_slices_carry_their_lengths,
            scalars_swap_per_thread,
            a_swap_among_thread_work_is_not_split,
            shared_slices_sized_at_launch_sum_tiles_of_every_length,
            shared_slices_beyond_the_device_or_their_type_are_typed_errors,
            an_index_past_a_shared_slice_is_caught,
            f16_and_bf16_match_the_half_crate_bit_for_bit,
            an_f16_stencil_with_f32_accumulation_matches_the_cpu,
            a_bf16_dot_product_with_shuffles_and_atomics_matches_the_cpu,
            chunks_of_four_keys_match_the_cpu,
            chunks_of_every_width_move_every_element,
            a_chunk_past_the_end_is_out_of_bounds,
            a_generic_kernel_moves_chunks_of_every_element_type,
            chunks_pass_through_functions_and_swaps,
            async_copies_stage_tiles_while_the_block_works,
            async_copies_of_every_width_move_every_element,
            an_async_copy_past_the_end_is_out_of_bounds,
        );
    };
}

/// Calls `$runner!` with the checks only the full GPU tier (`tests/full_gpu_kernels.rs`) runs
/// on a GPU: those that sweep block sizes, barriers or tile shapes over kernels the quick
/// tier already runs once.
#[macro_export]
macro_rules! with_full_tier_checks {
    ($runner:ident) => {
        $runner!(
            many_phases_each_see_every_blocks_writes,
            a_profile_shows_every_barrier_holding_every_block,
            bitonic_sorts_under_every_barrier_with_more_tiles_than_blocks,
            the_radix_sort_runs_under_every_barrier,
            the_key_sort_runs_every_block_size_and_chunking,
            smith_waterman_tiles_of_any_shape_give_the_same_alignment,
            smith_waterman_stripes_of_any_shape_give_the_same_alignment,
            smith_waterman_runs_under_every_barrier,
        );
    };
}
