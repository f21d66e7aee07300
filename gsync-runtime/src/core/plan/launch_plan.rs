//! A launch with every value resolved and checked: what a backend receives.

use std::time::Duration;

use crate::barrier::{AutoChoice, Barrier};
use crate::core::config::{ConfigChoice, LaunchConfig};
use crate::core::dynamic_shared::SharedLayout;
use crate::core::grid::Grid;
use crate::core::launch::{Launch, LaunchReport};
use crate::core::plan::build::KernelBuild;
use crate::core::profile::PhaseProfile;

/// One launch, resolved once: the kernel as it compiles, its grid and block, the barrier it
/// reports and the one it is compiled with, the shared slices laid out, and how its
/// configuration was chosen. A backend runs it as it is, without resolving anything.
#[derive(Clone, Debug)]
pub(crate) struct LaunchPlan {
    /// The kernel with the launch's bounds-check and profile choices.
    pub kernel: KernelBuild,
    /// The launch as asked, with the chosen configuration applied: its watchdog, deadline,
    /// profile capacity and graph replay.
    pub launch: Launch,
    /// Blocks, threads, ILBS groups and their shapes.
    pub grid: Grid,
    /// The barrier the launch reports (Auto resolved for the grid).
    pub barrier: Barrier,
    /// Why Auto chose `barrier`, for a launch that asked for Auto.
    pub auto: Option<AutoChoice>,
    /// The barrier whose fragment the launched code is compiled with, whose state it uses:
    /// `barrier`, or Relay's variant for the grid.
    pub compiled: Barrier,
    /// The shared slices laid out for the block size.
    pub shared: SharedLayout,
    /// How blocks × threads × barrier were chosen.
    pub choice: ConfigChoice,
}

impl LaunchPlan {
    /// Blocks × threads × barrier.
    pub fn config(&self) -> LaunchConfig {
        LaunchConfig { blocks: self.grid.blocks, threads: self.grid.threads, barrier: self.barrier }
    }

    /// What the launch reports, having taken `gpu_time` and recorded `profile`.
    pub fn report(&self, gpu_time: Duration, profile: Option<PhaseProfile>) -> LaunchReport {
        LaunchReport {
            gpu_time,
            blocks: self.grid.blocks,
            threads: self.grid.threads,
            barrier: self.barrier,
            auto: self.auto.clone(),
            choice: self.choice,
            profile,
        }
    }
}
