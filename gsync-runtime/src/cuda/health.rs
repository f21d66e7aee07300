//! Whether a CUDA context still works. After a sticky error (an illegal address or instruction,
//! a trap, ...) the driver fails every later call on the context with the same error, so the
//! first one is recorded with the launch that caused it, and every later call on the same
//! [`Gpu`](crate::Gpu) reports that, without asking the driver again.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock, PoisonError};

use cudarc::driver::sys::CUresult;
use cudarc::driver::DriverError;

use crate::barrier::Barrier;
use crate::core::error::{Error, Result};
use crate::core::grid::Grid;
use crate::core::kernel::KernelSpec;
use crate::cuda::DriverFailure;

/// What a context that was lost records.
#[derive(Clone, Debug)]
struct Loss {
    launch: String,
    source: DriverError,
}

/// The health of one GPU's context, as one [`Gpu`](crate::Gpu) sees it.
#[derive(Debug)]
pub(crate) struct ContextHealth {
    ordinal: usize,
    /// The launch under way or made last, to name it if the context is lost.
    last_launch: Mutex<Option<String>>,
    lost: OnceLock<Loss>,
}

impl ContextHealth {
    /// A working context of GPU `ordinal`.
    pub(crate) fn new(ordinal: usize) -> Self {
        ContextHealth { ordinal, last_launch: Mutex::new(None), lost: OnceLock::new() }
    }

    /// `Ok` while the context works; [`Error::ContextLost`] once it is lost.
    pub(crate) fn check(&self) -> Result<()> {
        match self.lost.get() {
            Some(loss) => Err(self.lost_error(loss)),
            None => Ok(()),
        }
    }

    /// Notes the launch about to be made, e.g. "kernel `smooth` (60 blocks x 32 threads,
    /// barrier ulfs)", so that a loss can name it.
    pub(crate) fn launching(&self, launch: String) {
        *self.last_launch.lock().unwrap_or_else(PoisonError::into_inner) = Some(launch);
    }

    /// Passes `error` on, unless it is a driver error that lost the context: then the loss is
    /// recorded (the first one stays) and the error becomes [`Error::ContextLost`].
    pub(crate) fn absorb(&self, error: Error) -> Error {
        let failure = match &error {
            Error::Driver { source, .. } => source.downcast_ref::<DriverFailure>().copied(),
            _ => None,
        };
        let Some(DriverFailure(source)) = failure.filter(|failure| is_sticky(failure.0 .0)) else {
            return error;
        };
        let launch = self.last_launch.lock().unwrap_or_else(PoisonError::into_inner).clone();
        let launch = launch.or_else(|| earlier_loss(self.ordinal)).unwrap_or_else(|| EARLIER_LAUNCH.to_owned());
        let loss = self.lost.get_or_init(|| Loss { launch, source });
        remember_loss(self.ordinal, &loss.launch);
        self.lost_error(loss)
    }

    /// Runs `op` if the context works, absorbing the loss of the context into its error.
    pub(crate) fn guard<T>(&self, op: impl FnOnce() -> Result<T>) -> Result<T> {
        self.check()?;
        op().map_err(|error| self.absorb(error))
    }

    fn lost_error(&self, loss: &Loss) -> Error {
        Error::ContextLost {
            gpu: self.ordinal,
            launch: loss.launch.clone(),
            source: Box::new(DriverFailure(loss.source)),
        }
    }
}

/// A launch as a lost context names it: "kernel `smooth` (60 blocks x 32 threads, barrier
/// ulfs)".
pub(crate) fn describe_launch(kernel: &KernelSpec, grid: Grid, barrier: Barrier) -> String {
    format!("kernel `{}` ({} blocks x {} threads, barrier {barrier})", kernel.name, grid.blocks, grid.threads)
}

/// The launch named when none was recorded: the context was lost through another
/// [`Gpu`](crate::Gpu) of the same device, whose handles still hold it.
const EARLIER_LAUNCH: &str = "an earlier launch in this process, through another Gpu of this device";

/// The launch that last lost each device's context in this process, so that a new
/// [`Gpu`](crate::Gpu) opened on a context that is still lost can name it.
fn losses() -> &'static Mutex<HashMap<usize, String>> {
    static LOSSES: OnceLock<Mutex<HashMap<usize, String>>> = OnceLock::new();
    LOSSES.get_or_init(Default::default)
}

fn remember_loss(ordinal: usize, launch: &str) {
    losses().lock().unwrap_or_else(PoisonError::into_inner).entry(ordinal).or_insert_with(|| launch.to_owned());
}

fn earlier_loss(ordinal: usize) -> Option<String> {
    losses().lock().unwrap_or_else(PoisonError::into_inner).get(&ordinal).cloned()
}

/// Forgets the loss of GPU `ordinal`'s context: a new context works.
pub(crate) fn forget_loss(ordinal: usize) {
    losses().lock().unwrap_or_else(PoisonError::into_inner).remove(&ordinal);
}

/// Whether a driver result leaves the context unusable: the driver's documentation says of
/// each of these that "any further CUDA work will return the same error".
pub(crate) fn is_sticky(result: CUresult) -> bool {
    matches!(
        result,
        CUresult::CUDA_ERROR_ILLEGAL_ADDRESS
            | CUresult::CUDA_ERROR_LAUNCH_TIMEOUT
            | CUresult::CUDA_ERROR_ASSERT
            | CUresult::CUDA_ERROR_HARDWARE_STACK_ERROR
            | CUresult::CUDA_ERROR_ILLEGAL_INSTRUCTION
            | CUresult::CUDA_ERROR_MISALIGNED_ADDRESS
            | CUresult::CUDA_ERROR_INVALID_ADDRESS_SPACE
            | CUresult::CUDA_ERROR_INVALID_PC
            | CUresult::CUDA_ERROR_LAUNCH_FAILED
            | CUresult::CUDA_ERROR_ECC_UNCORRECTABLE
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::cuda::{allocation_error, driver_error};

    fn driver(context: &str, result: CUresult) -> Error {
        driver_error(context)(DriverError(result))
    }

    #[test]
    fn a_launch_is_named_by_kernel_grid_and_barrier() {
        let grid = Grid::linear(60, 32, 8);
        let name = describe_launch(&crate::core::kernel::tests::SMOOTH, grid, Barrier::Ilbs { groups: Some(8) });
        assert_eq!(name, "kernel `smooth` (60 blocks x 32 threads, barrier ilbs:8)");
    }

    #[test]
    fn sticky_errors_are_those_that_poison_the_context() {
        for sticky in [
            CUresult::CUDA_ERROR_ILLEGAL_ADDRESS,
            CUresult::CUDA_ERROR_ILLEGAL_INSTRUCTION,
            CUresult::CUDA_ERROR_MISALIGNED_ADDRESS,
            CUresult::CUDA_ERROR_INVALID_PC,
            CUresult::CUDA_ERROR_HARDWARE_STACK_ERROR,
            CUresult::CUDA_ERROR_LAUNCH_FAILED,
            CUresult::CUDA_ERROR_ASSERT,
        ] {
            assert!(is_sticky(sticky), "{sticky:?}");
        }
        for recoverable in [
            CUresult::CUDA_ERROR_OUT_OF_MEMORY,
            CUresult::CUDA_ERROR_INVALID_VALUE,
            CUresult::CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE,
            CUresult::CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES,
            CUresult::CUDA_ERROR_NOT_FOUND,
        ] {
            assert!(!is_sticky(recoverable), "{recoverable:?}");
        }
    }

    #[test]
    fn the_first_sticky_error_names_its_launch_and_every_later_call_repeats_it() {
        let health = ContextHealth::new(41);
        assert!(health.check().is_ok());
        health.launching("kernel `trap` (1 block x 32 threads, barrier cooperative)".into());
        let first = health.absorb(driver("running kernel `trap`", CUresult::CUDA_ERROR_ILLEGAL_INSTRUCTION));
        let Error::ContextLost { gpu, launch, source } = &first else {
            panic!("expected ContextLost, got {first}");
        };
        assert_eq!((*gpu, launch.as_str()), (41, "kernel `trap` (1 block x 32 threads, barrier cooperative)"));
        let failure = source.downcast_ref::<DriverFailure>().expect("the driver's error");
        assert_eq!(failure.0 .0, CUresult::CUDA_ERROR_ILLEGAL_INSTRUCTION);
        let message = first.to_string();
        assert!(message.contains("context of GPU 41 is lost: kernel `trap`"), "{message}");
        assert!(message.contains("failed with CUDA_ERROR_ILLEGAL_INSTRUCTION"), "{message}");
        assert!(message.contains("restart the process"), "{message}");

        // Later calls fail before doing anything, with the same error.
        let mut ran = false;
        let later = health.guard(|| {
            ran = true;
            Ok(())
        });
        assert!(!ran, "a lost context is not used again");
        assert_eq!(later.expect_err("lost").to_string(), message);
        // What a later driver call reports is the loss, not "allocating N bytes".
        health.launching("kernel `other` (2 blocks x 64 threads, barrier lbs)".into());
        let allocation = allocation_error(4096)(DriverError(CUresult::CUDA_ERROR_ILLEGAL_INSTRUCTION));
        assert_eq!(health.absorb(allocation).to_string(), message, "the first loss stays");
        forget_loss(41);
    }

    #[test]
    fn other_errors_pass_through_and_leave_the_context_working() {
        let health = ContextHealth::new(42);
        let out_of_memory = health.absorb(allocation_error(1 << 40)(DriverError(CUresult::CUDA_ERROR_OUT_OF_MEMORY)));
        assert!(matches!(out_of_memory, Error::OutOfMemory { bytes } if bytes == 1 << 40), "{out_of_memory}");
        let refused = health.absorb(driver("launching", CUresult::CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE));
        assert!(matches!(refused, Error::Driver { .. }), "{refused}");
        assert!(health.check().is_ok());
    }

    #[test]
    fn a_new_gpu_on_a_context_still_lost_names_the_launch_another_gpu_recorded() {
        let first = ContextHealth::new(43);
        first.launching("kernel `wild` (4 blocks x 256 threads, barrier ulfs)".into());
        let _ = first.absorb(driver("running kernel `wild`", CUresult::CUDA_ERROR_ILLEGAL_ADDRESS));
        let second = ContextHealth::new(43);
        let error = second.absorb(driver("creating a stream", CUresult::CUDA_ERROR_ILLEGAL_ADDRESS));
        assert!(matches!(&error, Error::ContextLost { launch, .. } if launch.contains("kernel `wild`")), "{error}");
        forget_loss(43);
        let third = ContextHealth::new(43);
        let error = third.absorb(driver("creating a stream", CUresult::CUDA_ERROR_ILLEGAL_ADDRESS));
        assert!(matches!(&error, Error::ContextLost { launch, .. } if launch == EARLIER_LAUNCH), "{error}");
        forget_loss(43);
    }
}
