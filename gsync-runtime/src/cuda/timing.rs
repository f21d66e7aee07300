//! Kernel time from CUDA events.

use std::time::Duration;

use cudarc::driver::{CudaEvent, DriverError};

/// The time between two events around work that has finished; zero without events.
pub(crate) fn elapsed(events: Option<(CudaEvent, CudaEvent)>) -> Result<Duration, DriverError> {
    match &events {
        Some((start, end)) => elapsed_between(start, end),
        None => Ok(Duration::ZERO),
    }
}

/// The time between `start` and `end`, recorded around work that has finished.
pub(crate) fn elapsed_between(start: &CudaEvent, end: &CudaEvent) -> Result<Duration, DriverError> {
    let ms = start.elapsed_ms(end)?;
    Ok(Duration::try_from_secs_f64(f64::from(ms) / 1e3).unwrap_or_default())
}
