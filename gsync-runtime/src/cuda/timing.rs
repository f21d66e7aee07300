//! Kernel time from CUDA events.

use std::time::Duration;

use cudarc::driver::{CudaEvent, DriverError};

/// The time between two events around work that has finished; zero without events.
pub(crate) fn elapsed(events: Option<(CudaEvent, CudaEvent)>) -> Result<Duration, DriverError> {
    let Some((start, end)) = events else {
        return Ok(Duration::ZERO);
    };
    let ms = start.elapsed_ms(&end)?;
    Ok(Duration::try_from_secs_f64(f64::from(ms) / 1e3).unwrap_or_default())
}
