//! Uniformity: which values and which control flow can differ between
//! threads, so that a barrier some threads could skip is a compile error
//! instead of a GPU deadlock.
//!
//! A value is *varying* if it derives from thread identity (`thread_idx()`,
//! `global_id()`, `lane_id()`, a `grid_stride`/`block_stride` variable, an
//! atomic's or shuffle's result), from a load at a varying index, or from
//! another varying value, also through control flow (a variable assigned
//! under a varying condition). It is *block-uniform* if it can differ only
//! between blocks (`block_idx()`, anything read from shared memory).
//! `grid_sync()` needs uniform control flow; `sync_block()` and the warp
//! shuffles need at least block-uniform control flow.
//!
//! Control flow includes the parts of an expression that run only under a
//! condition: the right operand of `&&`/`||`, the branches of an `if`
//! expression, and a `while` condition after the first iteration. Each
//! expression is analysed under the level of the control that reaches it, so
//! `thread_idx() < 5 && shfl_xor(v, 1) > 0` is rejected like the `if` form.
//!
//! Variables are re-analysed until nothing changes, so a value that becomes
//! varying late in a loop body taints uses earlier in the body too.

use crate::diagnostics::Diagnostics;
use crate::ir::*;
use proc_macro2::Span;

/// How far a value or a branch can differ between threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Uniform,
    Block,
    Varying,
}

/// A level with the span that caused it, for the error's note.
#[derive(Clone, Copy, Debug)]
struct Taint {
    level: Level,
    cause: Option<Span>,
}

impl Taint {
    const UNIFORM: Taint = Taint { level: Level::Uniform, cause: None };

    fn at(level: Level, span: Span) -> Taint {
        Taint { level, cause: Some(span) }
    }

    fn join(self, other: Taint) -> Taint {
        if other.level > self.level {
            other
        } else {
            self
        }
    }
}

/// The most divergent control flow a collective ([`Collective`] lists
/// them) may run under.
fn tolerates(c: Collective) -> Level {
    match c {
        Collective::GridSync => Level::Uniform,
        Collective::SyncBlock | Collective::Shuffle => Level::Block,
    }
}

/// The error for a collective under control that depends on `scope` identity.
fn message(c: Collective, scope: &str) -> String {
    match c {
        Collective::GridSync => format!(
            "`grid_sync()` in control flow that depends on {scope} identity: the threads that skip it leave all others waiting forever"
        ),
        Collective::SyncBlock => format!(
            "`sync_block()` in control flow that depends on {scope} identity: threads that skip it leave the others waiting forever"
        ),
        Collective::Shuffle => {
            "warp shuffles exchange values among all 32 lanes: call them where every thread of the block takes part"
                .to_string()
        }
    }
}

struct Analysis<'k> {
    kernel: &'k Kernel,
    vars: Vec<Taint>,
    local_arrays: Vec<Taint>,
    /// Per loop: the control level of its `break`/`continue`/`return`s.
    loop_exits: Vec<Taint>,
    open_loops: Vec<LoopId>,
    /// After a `return` under varying control, the rest runs divergent.
    returned: Taint,
    changed: bool,
    report: bool,
    errors: Vec<(Span, String, Span, String)>,
}

pub fn check(k: &Kernel, diag: &mut Diagnostics) {
    let mut a = analyse(k);
    a.report = true;
    a.returned = Taint::UNIFORM;
    a.block(&k.body, Taint::UNIFORM);
    for (span, message, note_span, note) in a.errors {
        diag.error_with_note(span, message, note_span, note);
    }
}

/// The uniformity level of every variable, indexed by [`VarId`].
pub fn var_levels(k: &Kernel) -> Vec<Level> {
    analyse(k).vars.iter().map(|t| t.level).collect()
}

/// Runs the analysis to its fixed point.
fn analyse(k: &Kernel) -> Analysis<'_> {
    let mut a = Analysis {
        kernel: k,
        vars: vec![Taint::UNIFORM; k.vars.len()],
        local_arrays: vec![Taint::UNIFORM; k.arrays.len()],
        loop_exits: vec![Taint::UNIFORM; k.loops],
        open_loops: Vec::new(),
        returned: Taint::UNIFORM,
        changed: true,
        report: false,
        errors: Vec::new(),
    };
    while a.changed {
        a.changed = false;
        a.returned = Taint::UNIFORM;
        a.block(&k.body, Taint::UNIFORM);
    }
    a
}

impl Analysis<'_> {
    fn raise_var(&mut self, v: VarId, t: Taint) {
        if t.level > self.vars[v.0].level {
            self.vars[v.0] = t;
            self.changed = true;
        }
    }

    fn raise_array(&mut self, a: ArrayId, t: Taint) {
        if t.level > self.local_arrays[a.0].level {
            self.local_arrays[a.0] = t;
            self.changed = true;
        }
    }

    fn raise_exit(&mut self, l: LoopId, t: Taint) {
        if t.level > self.loop_exits[l.0].level {
            self.loop_exits[l.0] = t;
            self.changed = true;
        }
    }

    fn block(&mut self, block: &Block, ctx: Taint) {
        crate::stack::deep(|| self.block_inner(block, ctx))
    }

    fn block_inner(&mut self, block: &Block, ctx: Taint) {
        for s in block {
            let ctx = ctx.join(self.returned);
            self.stmt(s, ctx);
        }
    }

    fn stmt(&mut self, s: &Stmt, ctx: Taint) {
        crate::stack::deep(|| self.stmt_inner(s, ctx))
    }

    fn stmt_inner(&mut self, s: &Stmt, ctx: Taint) {
        match &s.kind {
            StmtKind::Let { var, init } => {
                let t = init.as_ref().map_or(Taint::UNIFORM, |e| self.expr(e, ctx));
                self.raise_var(*var, t.join(ctx));
            }
            StmtKind::LetArray { array, init } => {
                let t = match init {
                    ArrayInit::Repeat(e) => self.expr(e, ctx),
                    ArrayInit::List(es) => es.iter().fold(Taint::UNIFORM, |t, e| t.join(self.expr(e, ctx))),
                };
                self.raise_array(*array, t.join(ctx));
            }
            StmtKind::Assign { place, value, .. } => {
                let t = self.expr(value, ctx).join(ctx);
                match place {
                    Place::Var(v) => self.raise_var(*v, t),
                    Place::Elem { array, index, .. } => {
                        let it = self.expr(index, ctx);
                        if self.kernel.array(*array).space == ArraySpace::Local {
                            self.raise_array(*array, t.join(it));
                        }
                    }
                }
            }
            StmtKind::Expr(e) => {
                self.expr(e, ctx);
            }
            StmtKind::If { cond, then, otherwise } => {
                let inner = ctx.join(self.expr(cond, ctx));
                self.block(then, inner);
                if let Some(o) = otherwise {
                    self.block(o, inner);
                }
            }
            StmtKind::While { id, cond, body } => {
                // After the first test, only the threads still in the loop
                // evaluate the condition: a varying condition is a varying exit.
                let cond = self.expr(cond, ctx.join(self.loop_exits[id.0]));
                self.raise_exit(*id, cond);
                let inner = ctx.join(cond).join(self.loop_exits[id.0]);
                self.loop_body(*id, body, inner);
            }
            StmtKind::Loop { id, body } => {
                let inner = ctx.join(self.loop_exits[id.0]);
                self.loop_body(*id, body, inner);
            }
            StmtKind::For { id, var, range, body } => {
                let inner = match range {
                    ForRange::Seq { start, end, step, .. } => {
                        let mut t = self.expr(start, ctx).join(self.expr(end, ctx));
                        if let Some(st) = step {
                            t = t.join(self.expr(st, ctx));
                        }
                        ctx.join(t).join(self.loop_exits[id.0])
                    }
                    ForRange::GridStride { start, end } | ForRange::BlockStride { start, end } => {
                        self.expr(start, ctx);
                        self.expr(end, ctx);
                        ctx.join(Taint::at(Level::Varying, s.span))
                    }
                };
                self.raise_var(*var, inner);
                self.loop_body(*id, body, inner);
            }
            StmtKind::Break(l) | StmtKind::Continue(l) => self.raise_exit(*l, ctx),
            StmtKind::Return => {
                for l in self.open_loops.clone() {
                    self.raise_exit(l, ctx);
                }
                if ctx.level > self.returned.level {
                    self.returned = ctx;
                }
            }
            StmtKind::GridSync { .. } | StmtKind::SyncBlock => {}
            StmtKind::Block(b) => self.block(b, ctx),
            StmtKind::WaitUntil { cond, .. } => {
                self.expr(cond, ctx);
            }
            StmtKind::Locked { index, body, .. } => {
                self.expr(index, ctx);
                // One thread at a time runs the critical section.
                self.block(body, ctx.join(Taint::at(Level::Varying, s.span)));
            }
        }
        if let Some(c) = Collective::of_stmt(&s.kind) {
            self.collective(c, s.span, ctx);
        }
    }

    fn loop_body(&mut self, id: LoopId, body: &Block, ctx: Taint) {
        self.open_loops.push(id);
        self.block(body, ctx);
        self.open_loops.pop();
    }

    /// Reports a collective reached under control more divergent than it tolerates.
    fn collective(&mut self, c: Collective, span: Span, ctx: Taint) {
        if ctx.level > tolerates(c) {
            let scope = if ctx.level == Level::Block { "block" } else { "thread" };
            self.error(span, message(c, scope), ctx, format!("this depends on {scope} identity"));
        }
    }

    fn error(&mut self, span: Span, message: impl Into<String>, ctx: Taint, note: impl Into<String>) {
        if self.report {
            self.errors.push((span, message.into(), ctx.cause.unwrap_or(span), note.into()));
        }
    }

    /// The level of an expression's value; `ctx` is the control under which
    /// it is evaluated, which its conditionally evaluated parts extend.
    fn expr(&mut self, e: &Expr, ctx: Taint) -> Taint {
        crate::stack::deep(|| self.expr_inner(e, ctx))
    }

    fn expr_inner(&mut self, e: &Expr, ctx: Taint) -> Taint {
        if let Some(c) = Collective::of_expr(&e.kind) {
            self.collective(c, e.span, ctx);
        }
        match &e.kind {
            ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Bool(_) | ExprKind::Len(_) => Taint::UNIFORM,
            ExprKind::Var(v) => {
                let t = self.vars[v.0];
                if t.level > Level::Uniform {
                    Taint::at(t.level, e.span)
                } else {
                    t
                }
            }
            ExprKind::Builtin(b) => match b {
                Builtin::ThreadIdx | Builtin::GlobalId | Builtin::LaneId => Taint::at(Level::Varying, e.span),
                Builtin::BlockIdx => Taint::at(Level::Block, e.span),
                Builtin::BlockDim | Builtin::GridDim | Builtin::GridSize | Builtin::WarpSize => Taint::UNIFORM,
            },
            ExprKind::Unary(_, a) | ExprKind::Cast(a) => self.expr(a, ctx),
            ExprKind::Binary(op, a, b) => {
                let ta = self.expr(a, ctx);
                // `a && b`, `a || b`: `b` runs only where `a` allows it.
                let b_ctx = if op.is_logical() { ctx.join(ta) } else { ctx };
                ta.join(self.expr(b, b_ctx))
            }
            ExprKind::Load { array, index, .. } => {
                let t = self.expr(index, ctx);
                match self.kernel.array(*array).space {
                    ArraySpace::Global => t,
                    ArraySpace::Shared => t.join(Taint::at(Level::Block, e.span)),
                    ArraySpace::Local => t.join(self.local_arrays[array.0]),
                }
            }
            ExprKind::Call { args, .. } => args.iter().fold(Taint::UNIFORM, |t, a| t.join(self.expr(a, ctx))),
            ExprKind::Atomic { index, args, .. } => {
                self.expr(index, ctx);
                for a in args {
                    self.expr(a, ctx);
                }
                Taint::at(Level::Varying, e.span)
            }
            ExprKind::Shuffle { value, lane, .. } => {
                self.expr(value, ctx);
                self.expr(lane, ctx);
                Taint::at(Level::Varying, e.span)
            }
            ExprKind::Select { cond, then, otherwise } => {
                let t = self.expr(cond, ctx);
                let branch = ctx.join(t);
                t.join(self.expr(then, branch)).join(self.expr(otherwise, branch))
            }
        }
    }
}
