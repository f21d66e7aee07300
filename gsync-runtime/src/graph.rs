//! Launches captured into a CUDA graph and replayed: [`Capture`], a stream under capture whose
//! `submit`s record launches instead of running them, and [`Graph`], what it recorded.

use std::cell::Cell;
use std::fmt;
use std::marker::PhantomData;
use std::time::Duration;

use cudarc::driver::{CudaEvent, CudaGraph};

use crate::core::error::{Error, Result};
use crate::cuda::{graph, CudaGpu};
use crate::gpu::Gpu;
use crate::pending::Pending;

/// A capture of launches into a CUDA graph, begun by [`Gpu::capture`]: each kernel's
/// `submit`/`submit_with` on [`Capture::gpu`] records its launch instead of running it, and
/// [`Capture::finish`] takes the launches and returns the [`Graph`], which replays them all in
/// one submission, in their order.
///
/// With a kernel `double` from `#[grid_phases]` (the facade crate `gsync`; this example is
/// compiled and run as `tests/common/pending.rs`'s capture check):
///
/// ```ignore
/// # use gsync::prelude::*;
/// # #[grid_phases] fn double(a: &mut [u32]) { for i in grid_stride(0..a.len()) { a[i] = a[i] * 2; } }
/// # fn main() -> gsync::Result<()> {
/// let gpu = Gpu::cuda(0)?;
/// let mut a = gpu.upload(&[1u32, 2, 3])?;
/// let capture = gpu.capture()?;
/// let launch = Launch::new().blocks(1).threads(32);
/// let first = double::submit_with(capture.gpu(), &launch, &mut a)?;
/// let graph = capture.finish(vec![first])?;
/// for _ in 0..10 {
///     graph.replay()?;
/// }
/// drop(graph);
/// assert_eq!(gpu.download(&a)?, [1024, 2048, 3072]);
/// # Ok(())
/// # }
/// ```
///
/// What a capture records: fused launches outside a team, with a named configuration or the
/// remembered or heuristic one (nothing is measured while recording), and split runs
/// ([`Barrier::MultiLaunch`](crate::Barrier::MultiLaunch)): their host code runs once, while
/// recording, and every replay launches the segments it launched then. A split run whose host
/// code reads a device value to decide what to launch (a `while` on device data around a
/// `grid_sync()`), a split run replayed as a graph of its own
/// ([`Launch::graph`](crate::Launch::graph)) and a profiled launch are refused with
/// [`Error::Capture`]; so is a blocking `launch`, and so are copies and allocations through
/// the capture's `Gpu`: make them through the `Gpu` the capture came from. Each pending launch borrows its buffers
/// mutably until the graph is dropped, so the launches of one graph write disjoint buffers.
/// Once finished, the capture's `Gpu` runs launches as any `Gpu` does. CUDA only.
pub struct Capture<'g> {
    gpu: Gpu,
    finished: Cell<bool>,
    _from: PhantomData<&'g Gpu>,
}

/// A CUDA graph of launches recorded by a [`Capture`]. It borrows their buffers as the
/// pending launches did, for as long as it lives; [`replay`](Self::replay) runs every launch
/// again and reports the first error among them.
pub struct Graph<'a> {
    gpu: &'a CudaGpu,
    graph: CudaGraph,
    launches: Vec<Pending<'a>>,
    timing: (CudaEvent, CudaEvent),
}

impl Gpu {
    /// Begins a CUDA graph capture on a stream of its own of this GPU (see [`Capture`]).
    /// On the emulator, [`Error::WrongBackend`]; on a PE of a team, [`Error::TeamStream`].
    pub fn capture(&self) -> Result<Capture<'_>> {
        let cuda = self.require_cuda("Gpu::capture")?;
        let gpu = Gpu::over(cuda.for_capture()?);
        graph::begin(gpu.require_cuda("Gpu::capture")?)?;
        Ok(Capture { gpu, finished: Cell::new(false), _from: PhantomData })
    }
}

impl<'g> Capture<'g> {
    /// The `Gpu` whose `submit`s are recorded.
    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// Ends the capture into a [`Graph`] of `launches`, every launch submitted on
    /// [`gpu`](Self::gpu), each once. Handing in fewer or others is [`Error::Capture`], as is
    /// a second `finish`.
    pub fn finish<'a>(&'a self, launches: Vec<Pending<'a>>) -> Result<Graph<'a>> {
        let cuda = self.gpu.require_cuda("Capture::finish")?;
        if self.finished.replace(true) {
            return Err(Error::Capture { reason: "this capture has been finished already".into() });
        }
        let graph = graph::end(cuda);
        // From here on the capture's Gpu runs what it is given.
        cuda.end_capturing();
        let graph = graph?;
        if cuda.capture_poisoned() {
            return Err(Error::Capture {
                reason: "a launch failed while it was being recorded, after part of it was; capture again".into(),
            });
        }
        let recorded = cuda.captured();
        let handed_in = launches.iter().filter(|launch| launch.captured_on(cuda)).count();
        if handed_in != recorded || launches.len() != recorded {
            return Err(Error::Capture {
                reason: format!(
                    "the capture recorded {recorded} launch(es), but {} were handed to finish, {handed_in} of them \
                     recorded by this capture; hand in every pending launch that `submit` returned on its Gpu",
                    launches.len()
                ),
            });
        }
        Ok(Graph { gpu: cuda, graph, launches, timing: graph::timing(cuda)? })
    }
}

impl Drop for Capture<'_> {
    fn drop(&mut self) {
        if !self.finished.get() {
            if let Ok(cuda) = self.gpu.require_cuda("Capture::drop") {
                graph::abandon(cuda);
                cuda.end_capturing();
            }
        }
    }
}

impl Graph<'_> {
    /// Replays every recorded launch, in order, and waits for them: the GPU time of the whole
    /// replay, or the first launch's error (status, assertion, bounds, watchdog).
    pub fn replay(&self) -> Result<Duration> {
        let time = graph::replay(self.gpu, &self.graph, &self.timing)?;
        for launch in &self.launches {
            launch.replayed()?;
        }
        Ok(time)
    }

    /// The number of launches the graph replays.
    pub fn launches(&self) -> usize {
        self.launches.len()
    }
}

impl fmt::Debug for Capture<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Capture").field("finished", &self.finished.get()).finish_non_exhaustive()
    }
}

impl fmt::Debug for Graph<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Graph").field("launches", &self.launches.len()).finish_non_exhaustive()
    }
}
