//! The emulator's status word: the first fault of a launch, kept like the device keeps its own,
//! and the flag that stops a launch whose watchdog expired, like the device's abort flag.

use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::OnceLock;

use crate::barrier::Barrier;
use crate::core::error::Result;
use crate::core::kernel::KernelSpec;
use crate::core::status::DeviceStatus;

/// The first fault any emulated thread of a launch reported; later ones are dropped, as the
/// device's status word keeps only the first.
#[derive(Debug, Default)]
pub(crate) struct Faults {
    first: OnceLock<DeviceStatus>,
    /// Raised by the watchdog: every thread ends at its next loop iteration.
    stop: AtomicBool,
    /// Whether the launch checks `debug_assert!`s: its bounds-check setting, as the device
    /// compiles them into the body with bounds checks only.
    debug_checks: bool,
}

impl Faults {
    /// The faults of a launch that checks `debug_assert!`s or not.
    pub(crate) fn new(debug_checks: bool) -> Faults {
        Faults { debug_checks, ..Faults::default() }
    }

    /// Whether the launch checks `debug_assert!`s.
    #[inline]
    pub(crate) fn debug_checks(&self) -> bool {
        self.debug_checks
    }

    /// Records the failure of the kernel's assertion `number` on Rust source line `line`,
    /// with the operands' bits of an `assert_eq!` or `assert_ne!`.
    #[cold]
    pub(crate) fn assertion_failed(&self, phase: u32, number: u32, line: u32, left: u64, right: u64) {
        let _ = self.first.set(DeviceStatus { phase, ..DeviceStatus::assertion_failed(number, line, left, right) });
    }

    /// Whether the launch's first fault is an assertion that failed in a thread that had
    /// passed fewer than `phase` `grid_sync()` calls.
    #[inline]
    pub(crate) fn assertion_failed_before(&self, phase: u32) -> bool {
        self.first.get().is_some_and(|status| status.is_assertion_failure() && status.phase < phase)
    }

    /// Records an out-of-bounds access of array `array` (the kernel's array number) at
    /// `index`, whose length is `len`, on Rust source line `line`.
    #[cold]
    pub(crate) fn out_of_bounds(&self, array: u32, index: u64, len: usize, line: u32) {
        // A later fault finds the slot taken and is dropped.
        let _ = self.first.set(DeviceStatus::out_of_bounds(array, index, len as u64, line));
    }

    /// Records a write to element `index` of array `array` while an async copy from it,
    /// issued on Rust source line `line`, was in flight.
    #[cold]
    pub(crate) fn async_source_written(&self, array: u32, index: u64, line: u32) {
        let _ = self.first.set(DeviceStatus::async_source_written(array, index, line));
    }

    /// Records an access of symmetric array `array` on PE `pe`, outside a team of `n_pes`, on
    /// Rust source line `line`.
    #[cold]
    pub(crate) fn no_such_pe(&self, array: u32, pe: u64, n_pes: u32, line: u32) {
        let _ = self.first.set(DeviceStatus::no_such_pe(array, pe, n_pes, line));
    }

    /// What stops the grid at its next barrier, if anything was recorded: a failed assertion
    /// or the passed deadline (other faults let it run on), described for the team.
    pub(crate) fn stopping(&self) -> Option<String> {
        let status = self.first.get()?;
        status.stops_the_grid().then(|| status.describe())
    }

    /// Whether the launch is being stopped.
    #[inline]
    pub(crate) fn stopped(&self) -> bool {
        self.stop.load(Relaxed)
    }

    /// The flag that stops the launch, for the watchdog.
    pub(crate) fn stop_flag(&self) -> &AtomicBool {
        &self.stop
    }

    /// Records a `step_by` whose step was 0, on Rust source line `line`.
    #[cold]
    pub(crate) fn zero_step(&self, line: u32) {
        let _ = self.first.set(DeviceStatus::zero_step(line));
    }

    /// `Ok` when nothing was recorded, else the error the device would have reported.
    pub(crate) fn into_result(self, kernel: &KernelSpec, barrier: Barrier) -> Result<()> {
        match self.first.into_inner() {
            Some(status) => status.into_result(kernel, barrier, None),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::error::Error;
    use crate::core::kernel::tests::SMOOTH;

    #[test]
    fn no_fault_is_ok_and_the_first_fault_wins() {
        assert!(Faults::default().into_result(&SMOOTH, Barrier::Cooperative).is_ok());
        let faults = Faults::default();
        faults.out_of_bounds(0, 9, 4, 12);
        faults.out_of_bounds(0, 10, 4, 13);
        let error = faults.into_result(&SMOOTH, Barrier::Cooperative).expect_err("a fault");
        assert!(matches!(error, Error::OutOfBounds { index: 9, len: 4, line: 12, .. }), "{error}");
    }
}
