//! The core of the runtime: what every backend shares, with no backend in it. Nothing here
//! imports the CUDA bindings or the emulator.
//!
//! - `device`: what a GPU is ([`DeviceInfo`]) and which backend runs it ([`Backend`]);
//! - `scalar`: the values a kernel takes by value and their 8-byte parameter slots;
//! - `kernel`: what `#[grid_phases]` emits ([`KernelSpec`]) and its CUDA translation unit;
//!   `assertion` describes its `assert!`s, and `assertion_error` makes a failed one's error;
//! - `args`: the arguments of one launch ([`KernelArgs`]), the buffers behind a
//!   [`KernelBuffer`];
//! - `dims`: 2-D and 3-D block and grid shapes ([`Dim3`]); `shape_check` their checks;
//! - `launch`: how to launch ([`Launch`]) and what a launch did ([`LaunchReport`]);
//! - `config`: a launch's configuration, blocks × threads × barrier ([`LaunchConfig`]), how it
//!   was chosen ([`ConfigChoice`]), and the size class it is tuned for;
//! - `profile`: a launch's per-phase profile ([`PhaseProfile`]), its record layout and
//!   export;
//! - `grid`: the grid of a launch, resolved and checked against the device and the barrier;
//! - `dynamic_shared`: a call's shared slices and their layout for a block size;
//! - `plan`: one launch resolved once, for every backend (`LaunchPlan`), behind the `Device`
//!   trait that each backend implements;
//! - `tune`: the configuration of a launch that leaves it open: remembered, measured through
//!   the device's hook, or the heuristic's; `config_cache` remembers tuned configurations in
//!   memory and on disk;
//! - `disk`: the cache directory and atomic writes, shared by the kernel and configuration
//!   caches;
//! - `split`: the checks of a split run, shared by the backends;
//! - `status`: the device status word, decoded into an [`Error`];
//! - `error`: every way the runtime can fail.

pub(crate) mod args;
pub(crate) mod assertion;
pub(crate) mod assertion_error;
pub(crate) mod config;
pub(crate) mod config_cache;
pub(crate) mod device;
pub(crate) mod dims;
pub(crate) mod disk;
pub(crate) mod dynamic_shared;
pub(crate) mod error;
pub(crate) mod grid;
pub(crate) mod kernel;
pub(crate) mod launch;
pub(crate) mod plan;
pub(crate) mod profile;
pub(crate) mod scalar;
pub(crate) mod shape_check;
pub(crate) mod split;
pub(crate) mod status;
pub(crate) mod tune;

pub use args::{KernelArgs, KernelBuffer};
pub use assertion::KernelAssertion;
pub use config::{ConfigChoice, LaunchConfig, SizeClass};
pub use device::{Backend, DeviceInfo};
pub use dims::{Axes, Dim3, RefusedBlockSizes, MAX_BLOCK_DIM, MAX_GRID_DIM};
pub use error::{Error, ErrorKind, Resource, Result, SourceError};
pub use grid::CoResidency;
pub use kernel::{KernelSpec, SplitSpec, DEFAULT_THREADS};
pub use launch::{Launch, LaunchReport, DEFAULT_DEADLINE, DEFAULT_WATCHDOG};
pub use profile::{
    BarrierFigures, BarrierVisit, BlockTimeline, PhaseFigures, PhaseProfile, ProfileClock, DEFAULT_PROFILE_PHASES,
};
pub use scalar::KernelScalar;
pub use tune::space::{TUNE_VAR, TUNING_BUDGET};
