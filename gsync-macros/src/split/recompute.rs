//! Per-thread values a split kernel recomputes instead of carrying them
//! across a barrier.
//!
//! CUDA code computes a thread's lane, warp and block once at the top
//! (`let lane = lane_id(); let warp = thread_idx() / 32;`) and uses them in
//! every phase. No per-thread value survives the end of a launch, but such a
//! value needs no carrying: it is a pure function of the thread's indices, the
//! launch shape and values the host passes, so each segment that uses it
//! evaluates its definition again at its start.
//!
//! A `let` qualifies when its variable is never assigned and its value is
//! built only from literals, index and launch-shape builtins, slice lengths,
//! host values that are never assigned, other qualifying values, elements of
//! qualifying thread-local arrays, operators and the pure math methods: no
//! load from memory other threads can write, no atomic, no shuffle. A
//! thread-local array qualifies when it is never assigned and its elements
//! qualify (a lookup table). Anything else is state, and the split refuses it.

use crate::diagnostics::line_of;
use crate::ir::*;
use crate::ir_walk::{each_expr, each_stmt};
use std::collections::{HashMap, HashSet};

/// Every definition of a kernel, in source order, with what recomputing needs to know.
pub struct Definitions<'k> {
    k: &'k Kernel,
    /// The `let` of each variable bound with a value, and its source position.
    lets: HashMap<VarId, (usize, Stmt)>,
    /// The declaration of each thread-local array, and its source position.
    arrays: HashMap<ArrayId, (usize, Stmt)>,
    /// The source position of every variable's binding (`let` or loop).
    bound_at: HashMap<VarId, usize>,
    assigned: HashSet<VarId>,
    assigned_arrays: HashSet<ArrayId>,
    /// Every grid barrier (`grid_sync()` or `gpu_sync()`): its source position, line and scope.
    syncs: Vec<(usize, u32, SyncScope)>,
}

/// A value a segment needs but cannot recompute: the variable or array, and why.
pub enum Unrecomputable {
    Var(VarId, String),
    Array(ArrayId, String),
}

impl<'k> Definitions<'k> {
    pub fn new(k: &'k Kernel) -> Self {
        let mut d = Definitions {
            k,
            lets: HashMap::new(),
            arrays: HashMap::new(),
            bound_at: HashMap::new(),
            assigned: HashSet::new(),
            assigned_arrays: HashSet::new(),
            syncs: Vec::new(),
        };
        let mut position = 0;
        // `each_stmt` visits statements in source order.
        each_stmt(&k.body, &mut |s| {
            position += 1;
            match &s.kind {
                StmtKind::Let { var, init } => {
                    d.bound_at.insert(*var, position);
                    if init.is_some() {
                        d.lets.insert(*var, (position, s.clone()));
                    }
                }
                StmtKind::For { var, .. } => {
                    d.bound_at.insert(*var, position);
                }
                StmtKind::LetArray { array, .. } => {
                    d.arrays.insert(*array, (position, s.clone()));
                }
                StmtKind::Assign { place: Place::Var(v), .. } => {
                    d.assigned.insert(*v);
                }
                StmtKind::Assign { place: Place::Elem { array, .. }, .. } => {
                    d.assigned_arrays.insert(*array);
                }
                StmtKind::GridSync { line, scope, .. } => d.syncs.push((position, *line, *scope)),
                _ => {}
            }
        });
        d
    }

    /// The line of the first `grid_sync()` after `v`'s binding: one that a value
    /// used after it crosses.
    pub fn sync_after_var(&self, v: VarId) -> Option<(u32, SyncScope)> {
        self.sync_after(self.bound_at.get(&v).copied().unwrap_or(0))
    }

    /// The line and scope of the first grid barrier after the declaration of array `a`.
    pub fn sync_after_array(&self, a: ArrayId) -> Option<(u32, SyncScope)> {
        self.sync_after(self.arrays.get(&a).map_or(0, |(p, _)| *p))
    }

    fn sync_after(&self, position: usize) -> Option<(u32, SyncScope)> {
        self.syncs.iter().find(|(p, ..)| *p > position).map(|&(_, line, scope)| (line, scope))
    }

    /// Whether a statement only defines a value that segments recompute where
    /// they need it, so that on its own it needs no launch. Not one that reads
    /// an array: the read could be out of bounds, which a launch must report
    /// even when no later segment uses the value.
    pub fn only_defines(&self, s: &Stmt, host: &dyn Fn(VarId) -> bool) -> bool {
        let mut reads = false;
        each_expr_of(s, &mut |e| reads |= matches!(e.kind, ExprKind::Load { .. }));
        if reads {
            return false;
        }
        match &s.kind {
            StmtKind::Let { var, .. } => self.var(*var, host).is_ok(),
            StmtKind::LetArray { array, .. } => self.array(*array, host).is_ok(),
            _ => false,
        }
    }

    /// The definitions a segment must evaluate first, in source order, so that
    /// it has `vars` and `arrays` (used, not declared by the segment, and not
    /// host values), and what they depend on.
    pub fn prelude(
        &self,
        vars: impl IntoIterator<Item = VarId>,
        arrays: impl IntoIterator<Item = ArrayId>,
        host: &dyn Fn(VarId) -> bool,
    ) -> Result<Vec<Stmt>, Unrecomputable> {
        let mut todo: Vec<Dep> = vars.into_iter().map(Dep::Var).chain(arrays.into_iter().map(Dep::Array)).collect();
        let mut seen = HashSet::new();
        let mut defs: Vec<(usize, &Stmt)> = Vec::new();
        while let Some(dep) = todo.pop() {
            if !seen.insert(dep) {
                continue;
            }
            let (position, s) = match dep {
                Dep::Var(v) if host(v) => continue,
                Dep::Var(v) => {
                    self.var(v, host).map_err(|why| Unrecomputable::Var(v, why))?;
                    &self.lets[&v]
                }
                Dep::Array(a) => {
                    self.array(a, host).map_err(|why| Unrecomputable::Array(a, why))?;
                    &self.arrays[&a]
                }
            };
            defs.push((*position, s));
            each_expr_of(s, &mut |e| match &e.kind {
                ExprKind::Var(w) => todo.push(Dep::Var(*w)),
                ExprKind::Load { array, .. } => todo.push(Dep::Array(*array)),
                _ => {}
            });
        }
        defs.sort_by_key(|(position, _)| *position);
        Ok(defs.into_iter().map(|(_, s)| s.clone()).collect())
    }

    /// Whether variable `v` can be recomputed, or why not (a predicate: "is …").
    fn var(&self, v: VarId, host: &dyn Fn(VarId) -> bool) -> Result<(), String> {
        if self.assigned.contains(&v) {
            return Err("is assigned after its definition".into());
        }
        let Some((_, s)) = self.lets.get(&v) else {
            return Err("is not bound to a value by a `let`".into());
        };
        self.pure(s, host)
    }

    /// Whether thread-local array `a` can be declared again, or why not.
    fn array(&self, a: ArrayId, host: &dyn Fn(VarId) -> bool) -> Result<(), String> {
        let info = self.k.array(a);
        if info.space != ArraySpace::Local {
            return Err("is memory, not a value".into());
        }
        if info.mutable || self.assigned_arrays.contains(&a) {
            return Err("has elements assigned after its declaration".into());
        }
        match self.arrays.get(&a) {
            Some((_, s)) => self.pure(s, host),
            None => Err("is not declared by a `let`".into()),
        }
    }

    /// Whether a definition's value is pure, or the first reason it is not.
    fn pure(&self, s: &Stmt, host: &dyn Fn(VarId) -> bool) -> Result<(), String> {
        let mut why: Option<String> = None;
        each_expr_of(s, &mut |e| {
            if why.is_some() {
                return;
            }
            why = match &e.kind {
                ExprKind::Var(w) if host(*w) => self.assigned.contains(w).then(|| {
                    format!(
                        "depends on `{}` (line {}), which is assigned between launches",
                        self.name(*w),
                        self.line(*w)
                    )
                }),
                ExprKind::Var(w) => self
                    .var(*w, host)
                    .err()
                    .map(|inner| format!("depends on `{}` (line {}), which {inner}", self.name(*w), self.line(*w))),
                ExprKind::Load { array, line, .. } => match self.array(*array, host) {
                    Ok(()) => None,
                    Err(_) if self.k.array(*array).space == ArraySpace::Local => {
                        Some(format!("reads `{}` (line {line}), whose elements are assigned", self.array_name(*array)))
                    }
                    Err(_) => Some(format!("is read from memory (line {line})")),
                },
                ExprKind::Atomic { line, .. } => Some(format!("comes from an atomic operation (line {line})")),
                ExprKind::Shuffle { .. } => Some("comes from a warp shuffle".into()),
                ExprKind::Vote { op, .. } => Some(format!("comes from a warp vote (`{}`)", op.name())),
                _ => None,
            };
        });
        why.map_or(Ok(()), Err)
    }

    fn name(&self, v: VarId) -> &str {
        &self.k.var(v).name
    }

    fn array_name(&self, a: ArrayId) -> &str {
        &self.k.array(a).name
    }

    fn line(&self, v: VarId) -> u32 {
        line_of(self.k.var(v).span)
    }
}

/// A value a definition depends on.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Dep {
    Var(VarId),
    Array(ArrayId),
}

/// Every expression a definition evaluates.
fn each_expr_of(s: &Stmt, f: &mut dyn FnMut(&Expr)) {
    for e in crate::ir_walk::stmt_exprs(s) {
        each_expr(e, f);
    }
}
