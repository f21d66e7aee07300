//! What the examples share: how they exit, which barriers `--barrier` names,
//! the launch their options describe, and the median of their timed runs.
#![allow(dead_code)] // each example uses what it needs

use gsync::{Barrier, Error, Launch};
use std::process::ExitCode;
use std::time::Duration;

/// Any error an example reports before exiting.
pub type AnyError = Box<dyn std::error::Error>;

/// Prints an error and exits with failure, or exits with success.
pub fn exit_code(result: Result<(), AnyError>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The median of `times` (the upper one of an even count); `None` when there are none.
pub fn median(mut times: Vec<Duration>) -> Option<Duration> {
    times.sort();
    times.get(times.len() / 2).copied()
}

/// The barriers `--barrier` names: one, several separated by commas, or with
/// `all` every barrier plus ILBS with the research paper's 6 groups.
pub fn barriers(arg: &str) -> Result<Vec<Barrier>, AnyError> {
    if arg == "all" {
        let mut all = Barrier::ALL.to_vec();
        all.push(Barrier::Ilbs { groups: Some(6) });
        Ok(all)
    } else {
        Ok(arg.split(',').map(str::parse).collect::<Result<_, _>>()?)
    }
}

/// Whether `e` is a barrier refusing this grid (LFS beyond its block size,
/// ILBS with more groups than blocks): a row to report, not a failure.
pub fn barrier_refused(e: &(dyn std::error::Error + 'static)) -> bool {
    matches!(e.downcast_ref::<Error>(), Some(Error::BarrierBlockLimit { .. } | Error::InvalidBarrier { .. }))
}

/// A launch with `barrier` and, where given, the grid and block size.
pub fn launch(barrier: Barrier, blocks: Option<u32>, threads: Option<u32>) -> Launch {
    let mut launch = Launch::new().barrier(barrier);
    if let Some(b) = blocks {
        launch = launch.blocks(b);
    }
    if let Some(t) = threads {
        launch = launch.threads(t);
    }
    launch
}

/// `n` pseudo-random floats in [0, 1) from a fixed xorshift sequence: the same input on every
/// run and machine.
pub fn xorshift_floats(n: usize) -> Vec<f32> {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    (0..n)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 40) as f32 / (1u64 << 24) as f32
        })
        .collect()
}
