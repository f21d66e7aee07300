//! A launch plan: one launch resolved once, in one order, for every backend.
//!
//! - `build`: the kernel as a launch compiles it ([`KernelBuild`]), and the compiled variant
//!   a backend loads ([`KernelVariant`]);
//! - `device`: what the plan asks of a backend ([`Device`]): facts, residency, and the tuner's
//!   measuring hook;
//! - `resolve`: the resolution order (threads → shared layout → barrier → variant →
//!   occupancy → grid → block limit → Relay's variant), for a fused launch, a split run, and
//!   the largest co-resident grid;
//! - `launch_plan`: the result ([`LaunchPlan`]), which a backend runs as it is.

pub(crate) mod build;
pub(crate) mod device;
pub(crate) mod launch_plan;
pub(crate) mod resolve;

pub(crate) use build::{KernelBuild, KernelVariant};
pub(crate) use device::{Device, Measure};
pub(crate) use launch_plan::LaunchPlan;
