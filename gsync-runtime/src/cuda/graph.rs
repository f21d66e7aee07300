//! A CUDA graph captured from a stream of its own ([`CudaGpu::for_capture`]): begun, ended into
//! an executable graph, and replayed between two timing events.

use std::time::Duration;

use cudarc::driver::sys::{CUevent_flags, CUgraphInstantiate_flags, CUstreamCaptureMode};
use cudarc::driver::{CudaEvent, CudaGraph};

use crate::core::error::{Error, Result};
use crate::cuda::context::CudaGpu;
use crate::cuda::driver_error;
use crate::cuda::timing::elapsed_between;

/// Starts capturing `gpu`'s stream. Relaxed mode: the capturing thread may still allocate a
/// launch's scratch (on the stream it came from) and load kernels while it records.
pub(crate) fn begin(gpu: &CudaGpu) -> Result<()> {
    let mode = CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED;
    gpu.health().guard(|| gpu.stream().begin_capture(mode).map_err(driver_error("starting a graph capture")))
}

/// Ends the capture of `gpu`'s stream into an executable graph, uploaded so that its first
/// replay is as fast as the others. A capture that recorded nothing is an error.
pub(crate) fn end(gpu: &CudaGpu) -> Result<CudaGraph> {
    gpu.health().guard(|| {
        let context = "ending a graph capture";
        let graph = gpu.stream().end_capture(CUgraphInstantiate_flags(0)).map_err(driver_error(context))?;
        let graph = graph.ok_or_else(|| Error::Capture { reason: "the capture recorded no launch".into() })?;
        graph.upload().map_err(driver_error(context))?;
        Ok(graph)
    })
}

/// Ends a capture that is given up, so that the stream works again.
pub(crate) fn abandon(gpu: &CudaGpu) {
    let _ = gpu.stream().end_capture(CUgraphInstantiate_flags(0));
}

/// The two events that time a graph's replays.
pub(crate) fn timing(gpu: &CudaGpu) -> Result<(CudaEvent, CudaEvent)> {
    let event = || {
        gpu.context().new_event(Some(CUevent_flags::CU_EVENT_DEFAULT)).map_err(driver_error("creating a timing event"))
    };
    Ok((event()?, event()?))
}

/// Replays `graph` on `gpu`'s stream between the `timing` events and waits for it: the GPU
/// time of the replay.
pub(crate) fn replay(gpu: &CudaGpu, graph: &CudaGraph, timing: &(CudaEvent, CudaEvent)) -> Result<Duration> {
    gpu.health().guard(|| {
        let context = "replaying a CUDA graph";
        let stream = gpu.stream();
        // Its fused launches wait for those of the GPU's other streams (see `FusedOrder`).
        let order = gpu.fused_order();
        let ordered = order.wait_turn(stream).map_err(driver_error(context))?;
        let queued = timing
            .0
            .record(stream)
            .and_then(|()| graph.launch())
            .and_then(|()| timing.1.record(stream))
            .and_then(|()| if ordered { order.record(stream) } else { Ok(()) });
        // Whatever was queued ends before the graph's borrows may.
        let waited = stream.synchronize();
        queued.and(waited).map_err(driver_error(context))?;
        elapsed_between(&timing.0, &timing.1).map_err(driver_error(context))
    })
}
