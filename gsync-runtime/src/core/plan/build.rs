//! A kernel as one launch compiles it, and the variant a backend loads for a barrier and block
//! size.

use std::ops::Deref;

use crate::barrier::Barrier;
use crate::core::kernel::KernelSpec;
use crate::core::launch::Launch;

/// A kernel as one launch compiles it: what `#[grid_phases]` emitted ([`KernelSpec`]), with the
/// launch's bounds-check and profile choices in place of the emitted ones. It reads as that
/// kernel (`Deref`), so its `source`, `body` and `body_for` are this launch's.
#[derive(Clone, Copy, Debug)]
pub(crate) struct KernelBuild {
    spec: KernelSpec,
}

impl KernelBuild {
    /// `spec` as `launch` compiles it.
    pub fn new(spec: &KernelSpec, launch: &Launch) -> KernelBuild {
        let bounds_checks = launch.requested_bounds_checks().unwrap_or(spec.bounds_checks);
        KernelBuild { spec: KernelSpec { bounds_checks, profile: launch.records_profile(), ..*spec } }
    }

    /// The variant compiled for `barrier` (its fragment and state) and `threads` per block.
    pub fn variant(&self, barrier: Barrier, threads: u32) -> KernelVariant {
        KernelVariant { build: *self, barrier, threads }
    }
}

impl Deref for KernelBuild {
    type Target = KernelSpec;

    fn deref(&self) -> &KernelSpec {
        &self.spec
    }
}

/// One compiled form of a kernel build: what a backend compiles, loads and asks the occupancy
/// of. Under [`Barrier::MultiLaunch`] it is the segment kernels, whose first stands for the
/// others' occupancy.
#[derive(Clone, Copy, Debug)]
pub(crate) struct KernelVariant {
    /// The kernel as the launch compiles it.
    pub build: KernelBuild,
    /// The barrier whose fragment it is compiled with (never [`Barrier::Auto`] in a plan).
    pub barrier: Barrier,
    /// Threads per block, `GSYNC_BLOCK_SIZE`.
    pub threads: u32,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::kernel::tests::SMOOTH;

    #[test]
    fn a_build_takes_the_launch_s_profile_and_bounds_checks() {
        let plain = KernelBuild::new(&SMOOTH, &Launch::new());
        assert!(!plain.profile);
        assert_eq!(plain.bounds_checks, SMOOTH.bounds_checks);
        let profiled = KernelBuild::new(&SMOOTH, &Launch::new().profile(true).profile_phases(7));
        assert!(profiled.profile);
        assert!(!SMOOTH.profile, "what the macro emitted stays as emitted");
        assert!(profiled.source(Barrier::Lbs, 64).contains("#define GSYNC_PROFILE\n"));
        let unchecked = KernelBuild::new(&SMOOTH, &Launch::new().bounds_checks(false));
        assert!(!unchecked.bounds_checks && SMOOTH.bounds_checks);
        assert_eq!(unchecked.body_for(Barrier::Lbs), SMOOTH.unchecked_body);
        assert!(unchecked.source(Barrier::Lbs, 64).contains("bounds checks: off"));
    }
}
