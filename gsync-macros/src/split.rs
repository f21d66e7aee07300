//! Kernel splitting for the `MultiLaunch` barrier: the classic alternative
//! to a grid barrier, where every `grid_sync()` becomes a kernel boundary.
//!
//! The grid-uniform control flow around the barriers (the loops and `if`s
//! that contain a `grid_sync()`, and the uniform locals they use) runs on
//! the host; each run of statements between barriers becomes a *segment*,
//! one kernel launch that receives the host values it reads as parameters.
//! A uniform value read from device memory (`while flag[0] != 0`) is fetched
//! by the host. A per-thread value that is a pure function of the thread's
//! indices and host values (`let lane = lane_id();`) is recomputed by every
//! segment that uses it ([`recompute`]). A kernel whose per-thread state lives
//! across a barrier — a varying local read from memory or assigned, a shared
//! array or an assigned thread-local array — cannot be split; the plan then
//! says why, naming the variable, its line and the `grid_sync()`.

mod recompute;

use crate::check::Level;
use crate::diagnostics::line_of;
use crate::ir::*;
use crate::ir_walk::{each_expr, each_stmt, stmt_exprs};
use recompute::{Definitions, Unrecomputable};
use std::collections::{HashMap, HashSet};

/// The host code and the segments it launches.
#[derive(Debug)]
pub struct SplitPlan {
    pub host: Vec<HostStmt>,
    pub segments: Vec<Segment>,
    /// Whether host control flow reads device memory (then it cannot be captured as a graph).
    pub reads_device: bool,
}

/// One kernel launch between barriers.
#[derive(Debug)]
pub struct Segment {
    pub body: Block,
    /// Host values the segment reads, passed after the kernel's own parameters.
    pub host_values: Vec<VarId>,
    pub shared: Vec<ArrayId>,
    pub first_line: u32,
    pub last_line: u32,
}

/// A statement the host executes.
#[derive(Debug)]
pub enum HostStmt {
    Let {
        var: VarId,
        init: Option<Expr>,
    },
    Assign {
        var: VarId,
        op: Option<BinOp>,
        value: Expr,
    },
    If {
        cond: Expr,
        then: Vec<HostStmt>,
        otherwise: Option<Vec<HostStmt>>,
    },
    While {
        cond: Expr,
        body: Vec<HostStmt>,
    },
    Loop {
        body: Vec<HostStmt>,
    },
    For {
        var: VarId,
        range: ForRange,
        body: Vec<HostStmt>,
    },
    Break,
    Continue,
    /// Launch the segment with this index.
    Launch(usize),
    /// A `grid_sync()` passed: on a team, the next launch first crosses to the other PEs.
    /// (`gpu_sync()` needs nothing: the stream orders one GPU's launches.)
    GridSync,
    Block(Vec<HostStmt>),
    /// A device function's inlined body, when it holds a barrier or runs on the host.
    Inline {
        call: CallId,
        body: Vec<HostStmt>,
    },
    /// `return` out of an inlined body on the host.
    Leave(CallId),
    /// Two slice parameters trade places: later launches get each other's buffer.
    Swap(ArrayId, ArrayId),
}

/// Splits a kernel at its barriers, or explains why it cannot be split. `levels` says how
/// uniform each variable is (the uniformity check's [`Facts::levels`](crate::check::Facts)).
///
/// A uniform local first goes to the host; if per-thread code turns out to
/// assign it (a loop counter of a `sync_block()` loop, say), the split is
/// redone with that local kept on the device, until it settles.
pub fn plan(k: &Kernel, levels: &[Level]) -> Result<SplitPlan, String> {
    let defs = Definitions::new(k);
    let mut device_only = HashSet::new();
    loop {
        let mut host_vars = HashSet::new();
        for p in &k.params {
            if let Param::Scalar(v) = p {
                host_vars.insert(*v);
            }
        }
        let mut s = Splitter {
            k,
            defs: &defs,
            levels,
            host_vars,
            device_only: device_only.clone(),
            segments: Vec::new(),
            array_segment: HashMap::new(),
            reads_device: false,
            assigned_on_device: None,
        };
        match s.host_block(&k.body) {
            Ok(mut host) => {
                if s.segments.is_empty() {
                    // Nothing runs per thread; one empty launch still gives the run its grid.
                    s.push_segment(Vec::new(), Vec::new(), Vec::new(), &mut host);
                }
                return Ok(SplitPlan { host, segments: s.segments, reads_device: s.reads_device });
            }
            Err(reason) => match s.assigned_on_device {
                Some(v) if !k.var(v).is_param && device_only.insert(v) => {}
                _ => return Err(reason),
            },
        }
    }
}

struct Splitter<'k> {
    k: &'k Kernel,
    defs: &'k Definitions<'k>,
    /// The uniformity level of every variable, from the check.
    levels: &'k [Level],
    host_vars: HashSet<VarId>,
    /// Uniform locals that must stay on the device: per-thread code assigns them.
    device_only: HashSet<VarId>,
    segments: Vec<Segment>,
    /// The segment that uses each shared or thread-local array.
    array_segment: HashMap<ArrayId, usize>,
    reads_device: bool,
    /// The host variable whose assignment on the device ended the last attempt.
    assigned_on_device: Option<VarId>,
}

impl Splitter<'_> {
    fn host_block(&mut self, stmts: &Block) -> Result<Vec<HostStmt>, String> {
        crate::stack::deep(|| self.host_block_inner(stmts))
    }

    fn host_block_inner(&mut self, stmts: &Block) -> Result<Vec<HostStmt>, String> {
        let mut out = Vec::new();
        let mut pending: Vec<Stmt> = Vec::new();
        for s in stmts {
            if is_host_control(s) {
                self.flush(&mut pending, &mut out)?;
                if let Some(h) = self.host_control(s)? {
                    out.push(h);
                }
            } else if let Some(h) = self.try_host(s) {
                // Per-thread statements before a swap use the buffers as they were.
                if self.reads_memory(s) || self.assigns_any(s, &pending) || has_swap(s) {
                    self.flush(&mut pending, &mut out)?;
                }
                self.declare_host_vars(s);
                self.reads_device |= self.reads_memory(s);
                out.push(h);
            } else {
                pending.push(s.clone());
            }
        }
        self.flush(&mut pending, &mut out)?;
        Ok(out)
    }

    /// A statement that contains a barrier or leaves an enclosing host loop.
    fn host_control(&mut self, s: &Stmt) -> Result<Option<HostStmt>, String> {
        crate::stack::deep(|| self.host_control_inner(s))
    }

    fn host_control_inner(&mut self, s: &Stmt) -> Result<Option<HostStmt>, String> {
        let line = line_of(s.span);
        Ok(Some(match &s.kind {
            StmtKind::GridSync { scope: SyncScope::Team, .. } => HostStmt::GridSync,
            StmtKind::GridSync { scope: SyncScope::Gpu, .. } => return Ok(None),
            StmtKind::If { cond, then, otherwise } => {
                let cond = self.host_expr(cond, line)?;
                let then = self.host_block(then)?;
                let otherwise = otherwise.as_ref().map(|o| self.host_block(o)).transpose()?;
                HostStmt::If { cond, then, otherwise }
            }
            StmtKind::While { cond, body, .. } => {
                let cond = self.host_expr(cond, line)?;
                HostStmt::While { cond, body: self.host_block(body)? }
            }
            StmtKind::Loop { body, .. } => HostStmt::Loop { body: self.host_block(body)? },
            StmtKind::For { var, range: range @ ForRange::Seq { start, end, step, .. }, body, .. } => {
                self.host_expr(start, line)?;
                self.host_expr(end, line)?;
                if let Some(st) = step {
                    self.host_expr(st, line)?;
                }
                self.host_vars.insert(*var);
                HostStmt::For { var: *var, range: range.clone(), body: self.host_block(body)? }
            }
            StmtKind::Block(b) => HostStmt::Block(self.host_block(b)?),
            StmtKind::Inline { call, body } => HostStmt::Inline { call: *call, body: self.host_block(body)? },
            StmtKind::Leave(call) => HostStmt::Leave(*call),
            StmtKind::Break(_) => HostStmt::Break,
            StmtKind::Continue(_) => HostStmt::Continue,
            _ => return Err(format!("the statement at line {line} mixes per-thread work with a barrier")),
        }))
    }

    /// The statement as host code, if all of it can run on the host.
    fn try_host(&self, s: &Stmt) -> Option<HostStmt> {
        self.try_host_in(s, &mut HashSet::new())
    }

    /// `try_host` where `local` holds host variables declared by enclosing
    /// statements being converted.
    fn try_host_in(&self, s: &Stmt, local: &mut HashSet<VarId>) -> Option<HostStmt> {
        crate::stack::deep(|| self.try_host_in_inner(s, local))
    }

    fn try_host_in_inner(&self, s: &Stmt, local: &mut HashSet<VarId>) -> Option<HostStmt> {
        let known = |v: &VarId, local: &HashSet<VarId>| self.host_vars.contains(v) || local.contains(v);
        match &s.kind {
            // A value the same in every block of a PE (`pe()`) is the same on its host; one read
            // from memory stays on the device (a host read would wait for the stream).
            StmtKind::Let { var, init } if self.host_level(var, s) && !self.device_only.contains(var) => {
                if let Some(e) = init {
                    self.is_host_expr_in(e, local).then_some(())?;
                }
                local.insert(*var);
                Some(HostStmt::Let { var: *var, init: init.clone() })
            }
            StmtKind::Assign { place: Place::Var(v), op, value } if known(v, local) => {
                self.is_host_expr_in(value, local).then(|| HostStmt::Assign { var: *v, op: *op, value: value.clone() })
            }
            StmtKind::If { cond, then, otherwise } => {
                self.is_host_expr_in(cond, local).then_some(())?;
                let then = self.try_host_block(then, local)?;
                let otherwise = match otherwise {
                    Some(o) => Some(self.try_host_block(o, local)?),
                    None => None,
                };
                Some(HostStmt::If { cond: cond.clone(), then, otherwise })
            }
            StmtKind::Block(b) => Some(HostStmt::Block(self.try_host_block(b, local)?)),
            StmtKind::Inline { call, body } => {
                Some(HostStmt::Inline { call: *call, body: self.try_host_block(body, local)? })
            }
            StmtKind::Leave(call) => Some(HostStmt::Leave(*call)),
            StmtKind::Swap(a, b) => Some(HostStmt::Swap(*a, *b)),
            _ => None,
        }
    }

    fn try_host_block(&self, block: &Block, local: &HashSet<VarId>) -> Option<Vec<HostStmt>> {
        let mut scope = local.clone();
        block.iter().map(|s| self.try_host_in(s, &mut scope)).collect()
    }

    /// Records the host variables a converted statement declares.
    fn declare_host_vars(&mut self, s: &Stmt) {
        each_stmt(std::slice::from_ref(s), &mut |x| {
            if let StmtKind::Let { var, .. } = x.kind {
                self.host_vars.insert(var);
            }
        });
    }

    /// Whether a host statement must wait for the device statements before it.
    fn assigns_any(&self, s: &Stmt, pending: &[Stmt]) -> bool {
        let mut used = HashSet::new();
        for p in pending {
            collect_vars(p, &mut used, &mut HashSet::new());
        }
        used.iter().any(|v| assigns(std::slice::from_ref(s), *v))
    }

    /// Whether a `let` of `var` may run on the host: a uniform value, or a PE-uniform one
    /// that reads no memory.
    fn host_level(&self, var: &VarId, s: &Stmt) -> bool {
        match self.levels[var.0] {
            Level::Uniform => true,
            Level::Pe => !self.reads_memory(s),
            _ => false,
        }
    }

    fn reads_memory(&self, s: &Stmt) -> bool {
        let mut reads = false;
        each_stmt(std::slice::from_ref(s), &mut |x| {
            for e in stmt_exprs(x) {
                each_expr(e, &mut |y| reads |= matches!(y.kind, ExprKind::Load { .. }));
            }
        });
        reads
    }

    /// Whether the host can evaluate an expression: host values, launch
    /// shape, global-memory reads and arithmetic only.
    fn is_host_expr(&self, e: &Expr) -> bool {
        self.is_host_expr_in(e, &HashSet::new())
    }

    fn is_host_expr_in(&self, e: &Expr, local: &HashSet<VarId>) -> bool {
        let mut ok = true;
        each_expr(e, &mut |x| match &x.kind {
            ExprKind::Var(v) if !self.host_vars.contains(v) && !local.contains(v) => ok = false,
            ExprKind::Builtin(
                Builtin::ThreadIdx
                | Builtin::BlockIdx
                | Builtin::GlobalId
                | Builtin::LaneId
                | Builtin::WarpId
                | Builtin::ThreadIdxAxis(_)
                | Builtin::BlockIdxAxis(_),
            ) => ok = false,
            ExprKind::Load { array, .. } if self.k.array(*array).space != ArraySpace::Global => ok = false,
            // The host knows a shared slice's length, but not under that name.
            ExprKind::Len(array) if self.k.array(*array).space == ArraySpace::DynamicShared => ok = false,
            ExprKind::Atomic { .. } | ExprKind::Shuffle { .. } | ExprKind::Vote { .. } => ok = false,
            _ => {}
        });
        ok
    }

    fn host_expr(&mut self, e: &Expr, line: u32) -> Result<Expr, String> {
        if !self.is_host_expr(e) {
            let mut culprit = None;
            each_expr(e, &mut |x| {
                if let ExprKind::Var(v) = x.kind {
                    if !self.host_vars.contains(&v) && culprit.is_none() {
                        culprit = Some(v);
                    }
                }
            });
            return Err(match culprit {
                Some(v) => self.lives_across(v, None),
                None => format!("the control flow at line {line} around a grid_sync() cannot be evaluated on the host"),
            });
        }
        let mut reads = false;
        each_expr(e, &mut |x| reads |= matches!(x.kind, ExprKind::Load { .. }));
        self.reads_device |= reads;
        Ok(e.clone())
    }

    /// Why `v` cannot reach a segment: `why` it cannot be recomputed there, if
    /// that was the question.
    fn lives_across(&self, v: VarId, why: Option<&str>) -> String {
        let var = self.k.var(v);
        let sync = match self.defs.sync_after_var(v) {
            Some((line, scope)) => format!("the {} at line {line}", scope.call()),
            None => "a grid_sync()".to_owned(),
        };
        let why = why.map(|why| format!(", and a segment cannot recompute it: it {why}")).unwrap_or_default();
        format!(
            "`{}` (line {}) is a per-thread value that lives across {sync}{why}; MultiLaunch ends a kernel at every \
             grid_sync(), so keep it within one phase or use a fused barrier",
            var.name,
            line_of(var.span)
        )
    }

    /// Why thread-local array `a` cannot be declared again by a later segment.
    fn array_lives_across(&self, a: ArrayId, why: &str) -> String {
        let info = self.k.array(a);
        let sync = match self.defs.sync_after_array(a) {
            Some((line, scope)) => format!("the {} at line {line}", scope.call()),
            None => "a grid_sync()".to_owned(),
        };
        format!(
            "array `{}` (line {}) is used on both sides of {sync}, and a segment cannot declare it again: it {why}; \
             its contents do not survive the kernel boundary MultiLaunch puts there",
            info.name,
            line_of(info.span)
        )
    }

    /// Turns the pending device statements into a segment and its launch.
    ///
    /// The segment first recomputes the per-thread values it uses but does not
    /// define; statements that only define such values need no launch of their own.
    fn flush(&mut self, pending: &mut Vec<Stmt>, out: &mut Vec<HostStmt>) -> Result<(), String> {
        let host_vars = &self.host_vars;
        let host = |v: VarId| host_vars.contains(&v);
        if pending.iter().all(|s| self.defs.only_defines(s, &host)) {
            pending.clear();
            return Ok(());
        }
        if let Some(swap) = pending.iter().find(|s| has_swap(s)) {
            return Err(format!(
                "the swap at line {} sits among per-thread statements, but MultiLaunch swaps slices on the host \
                 between launches: move it out of the per-thread `if` or loop, or use a fused barrier",
                first_swap_line(swap)
            ));
        }
        let mut body = std::mem::take(pending);
        let (used, declared, arrays) = uses(&body);
        for v in sorted(&used) {
            if !declared.contains(&v) && self.host_vars.contains(&v) && assigns(&body, v) {
                self.assigned_on_device = Some(v);
                let var = self.k.var(v);
                return Err(format!(
                    "`{}` (line {}) is computed by the host between launches under MultiLaunch, but per-thread \
                     code assigns it; assign it outside per-thread work or use a fused barrier",
                    var.name,
                    line_of(var.span)
                ));
            }
        }
        let declared_arrays = declared_arrays(&body);
        let missing = sorted(&used).into_iter().filter(|v| !declared.contains(v) && !self.host_vars.contains(v));
        let missing_arrays = sorted_arrays(&arrays)
            .into_iter()
            .filter(|a| self.k.array(*a).space == ArraySpace::Local && !declared_arrays.contains(a));
        let host_vars = &self.host_vars;
        let host = |v: VarId| host_vars.contains(&v);
        let prelude = self.defs.prelude(missing, missing_arrays, &host).map_err(|e| match e {
            Unrecomputable::Var(v, why) => self.lives_across(v, Some(&why)),
            Unrecomputable::Array(a, why) => self.array_lives_across(a, &why),
        })?;
        body.splice(0..0, prelude);
        let (used, declared, arrays) = uses(&body);
        let host_values: Vec<VarId> = sorted(&used)
            .into_iter()
            .filter(|v| !declared.contains(v) && self.host_vars.contains(v) && !self.k.var(*v).is_param)
            .collect();
        let index = self.segments.len();
        let mut shared = Vec::new();
        for a in sorted_arrays(&arrays) {
            let info = self.k.array(a);
            if !info.space.is_shared() {
                continue;
            }
            // A segment that writes a shared array before reading it does not
            // need what an earlier segment left there.
            let fresh = first_access_is_write(&body, a);
            match self.array_segment.insert(a, index) {
                Some(other) if other != index && !fresh => {
                    let what = if info.space == ArraySpace::Shared { "shared array" } else { "shared slice" };
                    return Err(format!(
                        "{what} `{}` (line {}) is used on both sides of a grid_sync(); its contents do not \
                         survive the kernel boundary MultiLaunch puts there",
                        info.name,
                        line_of(info.span)
                    ));
                }
                _ => {}
            }
            shared.push(a);
        }
        self.push_segment(body, host_values, shared, out);
        Ok(())
    }

    /// Adds a segment and its launch.
    fn push_segment(&mut self, body: Block, host_values: Vec<VarId>, shared: Vec<ArrayId>, out: &mut Vec<HostStmt>) {
        let index = self.segments.len();
        let first_line = body.iter().map(|s| line_of(s.span)).min().unwrap_or(0);
        let last_line = body.iter().map(|s| line_of(s.span)).max().unwrap_or(0);
        self.segments.push(Segment { body, host_values, shared, first_line, last_line });
        out.push(HostStmt::Launch(index));
    }
}

/// The variables a block uses, those it declares, and the arrays it names.
fn uses(body: &[Stmt]) -> (HashSet<VarId>, HashSet<VarId>, HashSet<ArrayId>) {
    let (mut used, mut declared, mut arrays) = (HashSet::new(), HashSet::new(), HashSet::new());
    for s in body {
        collect_vars(s, &mut used, &mut declared);
        collect_arrays(s, &mut arrays);
    }
    (used, declared, arrays)
}

/// The thread-local arrays a block declares.
fn declared_arrays(body: &[Stmt]) -> HashSet<ArrayId> {
    let mut arrays = HashSet::new();
    each_stmt(body, &mut |s| {
        if let StmtKind::LetArray { array, .. } = s.kind {
            arrays.insert(array);
        }
    });
    arrays
}

/// Whether, in source order, the segment's first access to `array` writes it.
fn first_access_is_write(body: &[Stmt], array: ArrayId) -> bool {
    let mut first: Option<bool> = None;
    each_stmt(body, &mut |s| {
        if first.is_some() {
            return;
        }
        // The statement's own expressions are evaluated (read) before its store.
        let mut reads = false;
        for e in stmt_exprs(s) {
            each_expr(e, &mut |x| match &x.kind {
                ExprKind::Load { array: a, .. } | ExprKind::Atomic { array: a, .. } if *a == array => reads = true,
                _ => {}
            });
        }
        let writes = match &s.kind {
            StmtKind::Assign { place: Place::Elem { array: a, .. }, op, .. } if *a == array => op.is_none(),
            StmtKind::Assign { place: Place::Elem { array: a, .. }, .. } if *a == array => false,
            StmtKind::LetArray { array: a, .. } => *a == array,
            // Taking a lock reads its word first.
            StmtKind::Locked { array: a, .. } if *a == array => {
                reads = true;
                false
            }
            _ => false,
        };
        let compound =
            matches!(&s.kind, StmtKind::Assign { place: Place::Elem { array: a, .. }, op: Some(_), .. } if *a == array);
        if reads || compound {
            first = Some(false);
        } else if writes {
            first = Some(true);
        }
    });
    first.unwrap_or(true)
}

/// A barrier inside, or a `break`/`continue` that leaves the statement.
fn is_host_control(s: &Stmt) -> bool {
    let mut inner_loops = HashSet::new();
    let mut inner_calls = HashSet::new();
    let mut sync = false;
    let mut escapes = false;
    each_stmt(std::slice::from_ref(s), &mut |x| match &x.kind {
        StmtKind::GridSync { .. } => sync = true,
        StmtKind::While { id, .. } | StmtKind::Loop { id, .. } | StmtKind::For { id, .. } => {
            inner_loops.insert(*id);
        }
        StmtKind::Inline { call, .. } => {
            inner_calls.insert(*call);
        }
        _ => {}
    });
    each_stmt(std::slice::from_ref(s), &mut |x| match &x.kind {
        StmtKind::Break(l) | StmtKind::Continue(l) => escapes |= !inner_loops.contains(l),
        StmtKind::Leave(c) => escapes |= !inner_calls.contains(c),
        _ => {}
    });
    sync || escapes
}

/// Variables a statement reads or writes, and those it declares.
fn collect_vars(s: &Stmt, used: &mut HashSet<VarId>, declared: &mut HashSet<VarId>) {
    each_stmt(std::slice::from_ref(s), &mut |x| {
        match &x.kind {
            StmtKind::Let { var, .. } | StmtKind::For { var, .. } => {
                declared.insert(*var);
                used.insert(*var);
            }
            StmtKind::Assign { place: Place::Var(v), .. } => {
                used.insert(*v);
            }
            _ => {}
        }
        for e in stmt_exprs(x) {
            each_expr(e, &mut |y| {
                if let ExprKind::Var(v) = y.kind {
                    used.insert(v);
                }
            });
        }
    });
}

/// Arrays a statement touches.
fn collect_arrays(s: &Stmt, arrays: &mut HashSet<ArrayId>) {
    each_stmt(std::slice::from_ref(s), &mut |x| {
        match &x.kind {
            StmtKind::LetArray { array, .. }
            | StmtKind::Assign { place: Place::Elem { array, .. }, .. }
            | StmtKind::Locked { array, .. } => {
                arrays.insert(*array);
            }
            _ => {}
        }
        for e in stmt_exprs(x) {
            each_expr(e, &mut |y| match &y.kind {
                ExprKind::Load { array, .. } | ExprKind::Len(array) | ExprKind::Atomic { array, .. } => {
                    arrays.insert(*array);
                }
                _ => {}
            });
        }
    });
}

/// Whether a statement is or holds a `swap` of slices.
fn has_swap(s: &Stmt) -> bool {
    let mut found = false;
    each_stmt(std::slice::from_ref(s), &mut |x| found |= matches!(x.kind, StmtKind::Swap(..)));
    found
}

/// The line of the first `swap` a statement holds.
fn first_swap_line(s: &Stmt) -> u32 {
    let mut line = None;
    each_stmt(std::slice::from_ref(s), &mut |x| {
        if matches!(x.kind, StmtKind::Swap(..)) && line.is_none() {
            line = Some(line_of(x.span));
        }
    });
    line.unwrap_or_else(|| line_of(s.span))
}

fn assigns(body: &[Stmt], v: VarId) -> bool {
    let mut found = false;
    each_stmt(body, &mut |x| found |= matches!(&x.kind, StmtKind::Assign { place: Place::Var(w), .. } if *w == v));
    found
}

fn sorted(set: &HashSet<VarId>) -> Vec<VarId> {
    let mut v: Vec<VarId> = set.iter().copied().collect();
    v.sort_by_key(|x| x.0);
    v
}

fn sorted_arrays(set: &HashSet<ArrayId>) -> Vec<ArrayId> {
    let mut v: Vec<ArrayId> = set.iter().copied().collect();
    v.sort_by_key(|x| x.0);
    v
}
