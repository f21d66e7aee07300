//! Where a failed `assert!` stops: its thread, or the grid at the next `grid_sync()`.
//!
//! A thread that ends is harmless to `sync_block()` (the CTA barrier releases without the
//! threads that exited, as PTX defines) and to the warp collectives (which wait for no
//! exited lane), but not to a grid barrier: each block arrives there through one leader
//! thread, which may be the one that ended. So a failed assertion ends its thread only
//! where no `grid_sync()` can follow it; before a `grid_sync()`, the thread runs on to it,
//! and every thread of the grid stops right after it, where all of them see the failure.

use crate::ir::{Block, CallId, LoopId, Stmt, StmtKind};
use crate::ir_walk::{contains_grid_sync, each_stmt};
use std::collections::HashSet;

/// How a body's failed assertions stop.
pub struct AssertStops {
    /// The numbers of the assertions after which no `grid_sync()` can run: a failed one
    /// ends its thread.
    ending: HashSet<u32>,
    /// The `while` and `loop` loops that no `grid_sync()` can follow, in or after them: a
    /// thread past the launch's deadline may end in them.
    ending_loops: HashSet<LoopId>,
    /// Whether some assertion runs on to a `grid_sync()`, after which the grid stops.
    stop_at_grid_sync: bool,
}

impl AssertStops {
    /// The assertions of `body`, leaving out `debug_assert!`s unless `debug` (the body
    /// with bounds checks).
    pub fn of(body: &Block, debug: bool) -> AssertStops {
        let mut w = Walk { ending: HashSet::new(), ending_loops: HashSet::new(), leaves: Vec::new() };
        walk(body, false, &mut w);
        let (ending, ending_loops) = (w.ending, w.ending_loops);
        let mut stop_at_grid_sync = false;
        each_stmt(body, &mut |s| {
            if let StmtKind::Assert { assertion, .. } = &s.kind {
                stop_at_grid_sync |= (debug || !assertion.debug_only) && !ending.contains(&assertion.number);
            }
        });
        AssertStops { ending, ending_loops, stop_at_grid_sync }
    }

    /// Whether a failed assertion `number` ends its thread (else it runs on to a `grid_sync()`).
    pub fn ends_thread(&self, number: u32) -> bool {
        self.ending.contains(&number)
    }

    /// Whether a thread may end in the `while` or `loop` `id`: no `grid_sync()` can follow.
    pub fn loop_ends_thread(&self, id: LoopId) -> bool {
        self.ending_loops.contains(&id)
    }

    /// Whether every thread checks for a failed assertion after each `grid_sync()`.
    pub fn stop_at_grid_sync(&self) -> bool {
        self.stop_at_grid_sync
    }
}

/// Whether a block contains an assertion that is compiled into a body (`debug`: the one
/// with bounds checks).
pub fn has_assertions(body: &Block, debug: bool) -> bool {
    let mut found = false;
    each_stmt(body, &mut |s| {
        found |= matches!(&s.kind, StmtKind::Assert { assertion, .. } if debug || !assertion.debug_only)
    });
    found
}

/// Walks `block` backwards, `follows` telling whether a `grid_sync()` can run after it;
/// records the assertions none can follow, and returns whether one can run from the
/// block's start on.
fn walk(block: &Block, mut follows: bool, w: &mut Walk) -> bool {
    crate::stack::deep(|| {
        for s in block.iter().rev() {
            follows = stmt(s, follows, w);
        }
        follows
    })
}

/// What the backward walk knows besides the current statement.
struct Walk {
    /// The assertions no `grid_sync()` can follow.
    ending: HashSet<u32>,
    /// The `while` and `loop` loops no `grid_sync()` can follow.
    ending_loops: HashSet<LoopId>,
    /// For each inlined call being walked, whether a `grid_sync()` can follow the call:
    /// where its `return`s go.
    leaves: Vec<(CallId, bool)>,
}

fn stmt(s: &Stmt, follows: bool, w: &mut Walk) -> bool {
    match &s.kind {
        StmtKind::GridSync { .. } => true,
        StmtKind::Assert { assertion, .. } => {
            if !follows {
                w.ending.insert(assertion.number);
            }
            follows
        }
        StmtKind::If { then, otherwise, .. } => {
            let then = walk(then, follows, w);
            let otherwise = otherwise.as_ref().map_or(follows, |o| walk(o, follows, w));
            then || otherwise
        }
        // A later iteration may run the loop's own `grid_sync()` after anything in its body.
        StmtKind::While { id, body, .. } | StmtKind::Loop { id, body } | StmtKind::For { id, body, .. } => {
            let syncs = contains_grid_sync(body);
            if !(follows || syncs || matches!(s.kind, StmtKind::For { .. })) {
                w.ending_loops.insert(*id);
            }
            walk(body, follows || syncs, w);
            follows || syncs
        }
        // A device function's body is the caller's code: a `grid_sync()` inside it follows
        // what comes before it, and what follows the call follows everything inside.
        StmtKind::Inline { call, body } => {
            w.leaves.push((*call, follows));
            let from_start = walk(body, follows, w);
            w.leaves.pop();
            from_start
        }
        StmtKind::Leave(call) => w.leaves.iter().rev().find(|(c, _)| c == call).map_or(follows, |(_, f)| *f),
        StmtKind::Block(b) | StmtKind::Locked { body: b, .. } => walk(b, follows, w),
        // The condition's functions run again after themselves, as often as it polls.
        StmtKind::WaitUntil { before, .. } => walk(before, follows, w),
        _ => follows,
    }
}
