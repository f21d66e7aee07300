//! Launches that return once they are queued: [`Pending`], a handle that borrows the launch's
//! buffers until it is waited for.

use std::fmt;

use crate::core::error::{Error, Result};
use crate::core::launch::LaunchReport;
use crate::cuda::fused::Queued;
use crate::cuda::CudaGpu;
use crate::split::SplitRun;

/// A launch queued on a [`Gpu`](crate::Gpu)'s stream, returned by a kernel's `submit` and
/// `submit_with`: [`wait`](Self::wait) gives its [`LaunchReport`], or the error a blocking
/// launch would have returned (status, assertion, bounds, watchdog, lost context).
///
/// The handle borrows the launch's buffers (and the `Gpu`) for as long as it lives, so that
/// the borrow checker forbids reading, writing or freeing them while the GPU may still use
/// them. Dropping it unwaited waits for the launch and discards its outcome. Each launch in
/// flight has a status word and barrier state of its own, so any number may be queued at once.
///
/// What stays queued: a fused launch on a CUDA GPU outside a team, and a split run (its
/// segments queued as its host code passes them; a host read of a device value in the host
/// code waits for the launches before it). On the emulator, on a PE of a team (whose launch
/// agrees with every PE first) and for a split run replayed as a graph
/// ([`Launch::graph`](crate::Launch::graph)) the launch has run to its end when `submit`
/// returns, and the handle holds its outcome; a refusal is returned by `submit` either way.
/// On a [`Capture`](crate::Capture)'s `Gpu` the launch is recorded: the handle goes to
/// [`Capture::finish`](crate::Capture::finish), and its outcome comes with each replay.
/// `submit` itself may wait: the first time more launches are in flight than before (it
/// allocates a scratch), for a launch that tunes its configuration, and for the first Auto
/// launch on a GPU whose table is calibrated then (see [`Gpu::auto_table`](crate::Gpu::auto_table)).
///
/// Forgetting the handle (`std::mem::forget`) ends the borrows without waiting: the buffers
/// may then be freed, reused for another allocation or read while the kernel still runs,
/// which corrupts their contents and can fault the GPU, though not the host's memory; the
/// launch's scratch is leaked.
#[must_use = "a pending launch's outcome is known only once it is waited for"]
pub struct Pending<'a> {
    state: State<'a>,
}

enum State<'a> {
    /// Ran to its end already: its outcome.
    Finished(Result<LaunchReport>),
    /// A fused launch in flight on a CUDA GPU.
    Fused(Queued<'a>),
    /// A split run whose segments are queued.
    Split(SplitRun<'a>),
}

impl<'a> Pending<'a> {
    /// A launch that has run to its end.
    pub(crate) fn finished(outcome: Result<LaunchReport>) -> Self {
        Pending { state: State::Finished(outcome) }
    }

    /// A fused launch in flight.
    pub(crate) fn fused(queued: Queued<'a>) -> Self {
        Pending { state: State::Fused(queued) }
    }

    /// A split run with its segments queued, waiting for `finish`.
    pub(crate) fn split(run: SplitRun<'a>) -> Self {
        Pending { state: State::Split(run) }
    }

    /// Waits for the launch: its report, or its error. The buffers are free again afterwards.
    pub fn wait(self) -> Result<LaunchReport> {
        match self.state {
            State::Finished(outcome) => outcome,
            State::Fused(queued) => queued.wait(),
            State::Split(run) => run.finish(),
        }
    }
}

impl Pending<'_> {
    /// Whether this is a launch that `gpu`'s capture recorded.
    pub(crate) fn captured_on(&self, gpu: &CudaGpu) -> bool {
        match &self.state {
            State::Fused(queued) => queued.captured() && std::ptr::eq(queued.gpu(), gpu),
            State::Split(run) => run.recorded_on(gpu),
            State::Finished(_) => false,
        }
    }

    /// How the recorded launch ended in the replay of its graph that just finished.
    pub(crate) fn replayed(&self) -> Result<()> {
        match &self.state {
            State::Fused(queued) => queued.replayed(),
            State::Split(run) => run.replayed(),
            State::Finished(_) => {
                Err(Error::Capture { reason: "a launch that no capture recorded was handed to a graph".into() })
            }
        }
    }
}

impl fmt::Debug for Pending<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match &self.state {
            State::Finished(Ok(_)) => "finished",
            State::Finished(Err(_)) => "failed",
            State::Fused(_) => "fused launch in flight",
            State::Split(_) => "split run in flight",
        };
        f.debug_struct("Pending").field("state", &state).finish()
    }
}
