//! The device status word: how a kernel reports a fault, and its translation into an [`Error`].

use std::time::Duration;

use crate::barrier::Barrier;
use crate::core::assertion_error;
use crate::core::error::{Error, Result};
use crate::core::kernel::KernelSpec;

/// `gsync_status_t` is 32 bytes: four `u32` fields, then two `u64` fields.
pub(crate) const STATUS_WORDS: usize = 8;

const OK: u32 = 0;
const OUT_OF_BOUNDS: u32 = 1;
const BARRIER_TIMEOUT: u32 = 2;
const ZERO_STEP: u32 = 3;
const ASSERTION_FAILED: u32 = 4;
const SPIN_TIMEOUT: u32 = 5;
const DEADLINE_EXCEEDED: u32 = 6;
const NO_SUCH_PE: u32 = 7;
const PE_TIMEOUT: u32 = 8;
/// The emulator's own: the device cannot see it.
const ASYNC_SOURCE_WRITTEN: u32 = 9;

/// The host's view of `gsync_status_t` (see the prelude).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct DeviceStatus {
    pub code: u32,
    pub array: u32,
    pub line: u32,
    pub phase: u32,
    pub index: u64,
    pub len: u64,
}

impl DeviceStatus {
    /// Decodes the status read back as 32-bit words (the device is little-endian).
    pub fn from_words(words: &[u32; STATUS_WORDS]) -> Self {
        let wide = |low: u32, high: u32| u64::from(low) | (u64::from(high) << 32);
        DeviceStatus {
            code: words[0],
            array: words[1],
            line: words[2],
            phase: words[3],
            index: wide(words[4], words[5]),
            len: wide(words[6], words[7]),
        }
    }

    /// The status of an out-of-bounds access, as the device's bounds check writes it.
    pub fn out_of_bounds(array: u32, index: u64, len: u64, line: u32) -> Self {
        DeviceStatus { code: OUT_OF_BOUNDS, array, line, phase: 0, index, len }
    }

    /// The status of a `step_by` whose step was 0, as the device's loop writes it.
    pub fn zero_step(line: u32) -> Self {
        DeviceStatus { code: ZERO_STEP, line, ..DeviceStatus::default() }
    }

    /// The status of a failed `assert!`, the kernel's `number`-th, on Rust source line
    /// `line`, with the operands' bits of an `assert_eq!` or `assert_ne!`.
    pub fn assertion_failed(number: u32, line: u32, left: u64, right: u64) -> Self {
        DeviceStatus { code: ASSERTION_FAILED, array: number, line, phase: 0, index: left, len: right }
    }

    /// The status of an access of symmetric array `array` on PE `pe` of a team of `n_pes`,
    /// on Rust source line `line`, as the device's check writes it.
    pub fn no_such_pe(array: u32, pe: u64, n_pes: u32, line: u32) -> Self {
        DeviceStatus { code: NO_SUCH_PE, array, line, phase: 0, index: pe, len: u64::from(n_pes) }
    }

    /// The status of an async copy whose source element `index` of array `array` was written
    /// while the copy was in flight (issued on Rust source line `line`). Only the emulator
    /// reports it.
    pub fn async_source_written(array: u32, index: u64, line: u32) -> Self {
        DeviceStatus { code: ASYNC_SOURCE_WRITTEN, array, line, phase: 0, index, len: 0 }
    }

    /// Whether the grid stops at its next barrier for this status: a failed assertion or the
    /// deadline.
    pub fn stops_the_grid(&self) -> bool {
        self.code == ASSERTION_FAILED || self.code == DEADLINE_EXCEEDED
    }

    /// The status in a few words, for the other PEs of a team.
    pub fn describe(&self) -> String {
        match self.code {
            ASSERTION_FAILED => format!("an assertion failed on line {}", self.line),
            DEADLINE_EXCEEDED => "the launch's deadline passed".to_owned(),
            code => format!("it reported fault code {code}"),
        }
    }

    /// Whether this is a failed assertion's status.
    pub fn is_assertion_failure(&self) -> bool {
        self.code == ASSERTION_FAILED
    }

    /// `Ok` when the kernel reported nothing, else the error it reported. `barrier` and
    /// `watchdog` are the launch's, to explain a barrier timeout.
    pub fn into_result(self, kernel: &KernelSpec, barrier: Barrier, watchdog: Option<Duration>) -> Result<()> {
        match self.code {
            OK => Ok(()),
            OUT_OF_BOUNDS => Err(Error::OutOfBounds {
                kernel: kernel.name.to_owned(),
                array: kernel.array_name(self.array),
                index: self.index,
                len: self.len,
                line: self.line,
            }),
            // The device writes the waiting block into the `array` field.
            BARRIER_TIMEOUT => Err(Error::BarrierTimeout {
                kernel: kernel.name.to_owned(),
                barrier: barrier.to_string(),
                phase: self.phase,
                block: self.array,
                limit: watchdog.unwrap_or_default(),
            }),
            ZERO_STEP => Err(Error::ZeroStep { kernel: kernel.name.to_owned(), line: self.line }),
            // The device writes the assertion's number into `array`, its operands into `index` and `len`.
            ASSERTION_FAILED => Err(assertion_error::failed(kernel, self.array, self.line, self.index, self.len)),
            // The device writes the block that gave up into the `array` field.
            SPIN_TIMEOUT => Err(Error::SpinTimeout {
                kernel: kernel.name.to_owned(),
                line: self.line,
                block: self.array,
                limit: watchdog.unwrap_or_default(),
            }),
            // The device writes the grid_sync() calls passed, plus one, into `phase` (the phase
            // reached), and the deadline, in nanoseconds, into `index`.
            DEADLINE_EXCEEDED => Err(Error::DeadlineExceeded {
                kernel: kernel.name.to_owned(),
                phase: self.phase.max(1),
                limit: Duration::from_nanos(self.index),
            }),
            // The device writes the team's size into `len`.
            NO_SUCH_PE => Err(Error::NoSuchPe {
                kernel: kernel.name.to_owned(),
                array: kernel.array_name(self.array),
                pe: self.index,
                n_pes: u32::try_from(self.len).unwrap_or(u32::MAX),
                line: self.line,
            }),
            // The device writes the PE that did not arrive into `array`, and the grid_sync()
            // number waited at into `phase`.
            PE_TIMEOUT => Err(Error::PeNotArrived {
                pe: self.array,
                missing: vec![self.array],
                doing: format!("waits at grid_sync() number {} of `{}`", self.phase, kernel.name),
                waited: watchdog.unwrap_or_default(),
            }),
            ASYNC_SOURCE_WRITTEN => Err(Error::AsyncCopySourceWritten {
                kernel: kernel.name.to_owned(),
                array: kernel.array_name(self.array),
                index: self.index,
                line: self.line,
            }),
            code => Err(Error::DeviceFault { kernel: kernel.name.to_owned(), code }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::kernel::tests::SMOOTH;

    #[test]
    fn a_zeroed_status_is_ok() {
        let status = DeviceStatus::from_words(&[0; STATUS_WORDS]);
        assert_eq!(status, DeviceStatus::default());
        assert!(status.into_result(&SMOOTH, Barrier::Lbs, None).is_ok());
    }

    #[test]
    fn code_six_is_the_deadline_with_the_phase_reached() {
        // Three grid_sync() calls passed, plus one, and 250 ms in nanoseconds, as the device writes them.
        let words = [6, 0, 12, 4, 250_000_000, 0, 0, 0];
        let error = DeviceStatus::from_words(&words).into_result(&SMOOTH, Barrier::Cooperative, None);
        let Err(Error::DeadlineExceeded { kernel, phase, limit }) = error else {
            panic!("expected DeadlineExceeded, got {error:?}");
        };
        assert_eq!((kernel.as_str(), phase, limit), ("smooth", 4, Duration::from_millis(250)));
    }

    #[test]
    fn code_one_is_out_of_bounds_with_the_array_name() {
        let words = [1, 0, 17, 0, 5, 1, 4, 0];
        let error = DeviceStatus::from_words(&words).into_result(&SMOOTH, Barrier::Cooperative, None);
        let Err(Error::OutOfBounds { kernel, array, index, len, line }) = error else {
            panic!("expected OutOfBounds, got {error:?}");
        };
        assert_eq!((kernel.as_str(), array.as_str()), ("smooth", "a"));
        assert_eq!((index, len, line), ((1 << 32) | 5, 4, 17));
    }

    #[test]
    fn an_out_of_bounds_status_decodes_as_the_device_s_does() {
        let words = [1, 0, 17, 0, 5, 1, 4, 0];
        assert_eq!(DeviceStatus::out_of_bounds(0, (1 << 32) | 5, 4, 17), DeviceStatus::from_words(&words));
    }

    #[test]
    fn code_two_is_a_barrier_timeout_with_block_phase_and_limit() {
        let words = [2, 41, 0, 3, 0, 0, 0, 0];
        let limit = Some(Duration::from_millis(200));
        let error = DeviceStatus::from_words(&words).into_result(&SMOOTH, Barrier::Ilbs { groups: Some(4) }, limit);
        let Err(Error::BarrierTimeout { kernel, barrier, phase, block, limit }) = error else {
            panic!("expected BarrierTimeout, got {error:?}");
        };
        assert_eq!((kernel.as_str(), barrier.as_str()), ("smooth", "ilbs:4"));
        assert_eq!((phase, block, limit), (3, 41, Duration::from_millis(200)));
    }

    #[test]
    fn code_three_is_a_zero_step_with_its_line() {
        let words = [3, 0, 21, 0, 0, 0, 0, 0];
        assert_eq!(DeviceStatus::zero_step(21), DeviceStatus::from_words(&words));
        let error = DeviceStatus::from_words(&words).into_result(&SMOOTH, Barrier::Cooperative, None);
        assert!(matches!(&error, Err(Error::ZeroStep { kernel, line: 21 }) if kernel == "smooth"), "{error:?}");
    }

    #[test]
    fn code_four_is_a_failed_assertion_with_its_operands() {
        let words = [4, 0, 33, 0, 5, 0, 6, 0];
        assert_eq!(DeviceStatus::assertion_failed(0, 33, 5, 6), DeviceStatus::from_words(&words));
        assert!(DeviceStatus::from_words(&words).is_assertion_failure());
        let error = DeviceStatus::from_words(&words).into_result(&SMOOTH, Barrier::Cooperative, None);
        assert!(
            matches!(&error, Err(Error::AssertionFailed { kernel, line: 33, .. }) if kernel == "smooth"),
            "{error:?}"
        );
    }

    #[test]
    fn code_five_is_a_spin_timeout_with_its_line_block_and_limit() {
        let words = [5, 7, 33, 0, 0, 0, 0, 0];
        let limit = Some(Duration::from_millis(300));
        let error = DeviceStatus::from_words(&words).into_result(&SMOOTH, Barrier::Cooperative, limit);
        let Err(Error::SpinTimeout { kernel, line, block, limit }) = error else {
            panic!("expected SpinTimeout, got {error:?}");
        };
        assert_eq!(kernel, "smooth");
        assert_eq!((line, block, limit), (33, 7, Duration::from_millis(300)));
    }

    #[test]
    fn other_codes_are_device_faults() {
        let words = [10, 0, 0, 0, 0, 0, 0, 0];
        let error = DeviceStatus::from_words(&words).into_result(&SMOOTH, Barrier::Lbs, None);
        assert!(matches!(error, Err(Error::DeviceFault { code: 10, .. })));
    }

    #[test]
    fn code_nine_is_an_async_copy_s_source_written_with_the_array_name() {
        let status = DeviceStatus::async_source_written(0, 6, 44);
        let error = status.into_result(&SMOOTH, Barrier::Lbs, None);
        let Err(Error::AsyncCopySourceWritten { kernel, array, index, line }) = error else {
            panic!("expected AsyncCopySourceWritten, got {error:?}");
        };
        assert_eq!((kernel.as_str(), array.as_str(), index, line), ("smooth", "a", 6, 44));
    }
}
