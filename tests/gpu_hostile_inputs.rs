//! The language's edge cases (`hostile/mod.rs`) on a GPU: calls in conditional positions, an
//! assertion before an inlined `grid_sync()` (which must not hang), and kernels that never end,
//! stopped by their deadline.

mod hostile;

use gsync::prelude::*;
use std::time::Duration;

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_call_in_an_arm_runs_only_there() {
    hostile::a_call_in_an_arm_runs_only_there(&Gpu::new(0).unwrap());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn calls_in_conditions_read_only_where_rust_does() {
    hostile::calls_in_conditions_read_only_where_rust_does(&Gpu::new(0).unwrap());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn an_assert_before_an_inlined_barrier_reports_the_assertion() {
    hostile::an_assert_before_an_inlined_barrier_reports_the_assertion(&Gpu::new(0).unwrap());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_spin_condition_polls_through_a_call() {
    hostile::a_spin_condition_polls_through_a_call(&Gpu::new(0).unwrap());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_lookup_table_reads_its_values() {
    hostile::a_lookup_table_reads_its_values(&Gpu::new(0).unwrap());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_kernel_that_never_ends_stops_at_its_deadline() {
    hostile::a_kernel_that_never_ends_stops_at_its_deadline(&Gpu::new(0).unwrap(), Duration::from_millis(500));
}
