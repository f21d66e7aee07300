//! The language's edge cases (`common/hostile.rs`) on a GPU: calls in conditional positions, an
//! assertion before an inlined `grid_sync()` (which must not hang), and kernels that never end,
//! stopped by their deadline.

use common::hostile;

use gsync::prelude::*;
use std::time::Duration;

/// A GPU test per shared check.
macro_rules! on_the_gpu {
    ($($check:ident),* $(,)?) => {$(
        #[test]
        #[ignore = "needs a CUDA GPU"]
        fn $check() {
            hostile::$check(&Gpu::new(0).unwrap());
        }
    )*};
}

common::with_every_hostile_check!(on_the_gpu);

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_kernel_that_never_ends_stops_at_its_deadline() {
    hostile::a_kernel_that_never_ends_stops_at_its_deadline(&Gpu::new(0).unwrap(), Duration::from_millis(500));
}
