//! The end of type inference: the lowered IR again, each expression and
//! variable holding its final [`Scalar`] instead of an inference variable.

use super::types::TyId;
use crate::ir::{self, ArrayInit, AssertCheck, Expr, ExprKind, ForRange, Place, RangePut, Scalar, Stmt, StmtKind, Var};

/// Resolves inference variables through the finished type table.
pub struct Resolver<'t> {
    pub types: &'t [Scalar],
}

impl Resolver<'_> {
    fn ty(&self, t: TyId) -> Scalar {
        self.types[t.0]
    }

    /// A variable with its type.
    pub fn var(&self, v: Var<TyId>) -> Var {
        let Var { name, unique, ty, mutable, is_param, span } = v;
        Var { name, unique, ty: self.ty(ty), mutable, is_param, span }
    }

    /// A block with every type resolved.
    pub fn block(&self, b: ir::Block<TyId>) -> ir::Block {
        b.into_iter().map(|s| self.stmt(s)).collect()
    }

    fn stmt(&self, s: Stmt<TyId>) -> Stmt {
        crate::stack::deep(|| Stmt { kind: self.stmt_kind(s.kind), span: s.span })
    }

    fn stmt_kind(&self, k: StmtKind<TyId>) -> StmtKind {
        match k {
            StmtKind::Let { var, init } => StmtKind::Let { var, init: init.map(|e| self.expr(e)) },
            StmtKind::LetArray { array, init } => {
                let init = match init {
                    ArrayInit::Repeat(e) => ArrayInit::Repeat(self.expr(e)),
                    ArrayInit::List(es) => ArrayInit::List(self.exprs(es)),
                    ArrayInit::Chunk { chunk, loads } => ArrayInit::Chunk { chunk, loads: self.exprs(loads) },
                };
                StmtKind::LetArray { array, init }
            }
            StmtKind::Assign { place, op, value } => {
                let place = match place {
                    Place::Var(v) => Place::Var(v),
                    Place::Elem { array, index, line } => Place::Elem { array, index: self.boxed(*index), line },
                };
                StmtKind::Assign { place, op, value: self.expr(value) }
            }
            StmtKind::Expr(e) => StmtKind::Expr(self.expr(e)),
            StmtKind::If { cond, then, otherwise } => StmtKind::If {
                cond: self.expr(cond),
                then: self.block(then),
                otherwise: otherwise.map(|o| self.block(o)),
            },
            StmtKind::While { id, cond, body } => StmtKind::While { id, cond: self.expr(cond), body: self.block(body) },
            StmtKind::Loop { id, body } => StmtKind::Loop { id, body: self.block(body) },
            StmtKind::For { id, var, range, body } => {
                StmtKind::For { id, var, range: self.range(range), body: self.block(body) }
            }
            StmtKind::Break(id) => StmtKind::Break(id),
            StmtKind::Continue(id) => StmtKind::Continue(id),
            StmtKind::Return => StmtKind::Return,
            StmtKind::GridSync { index, line, scope } => StmtKind::GridSync { index, line, scope },
            StmtKind::SyncBlock => StmtKind::SyncBlock,
            StmtKind::Block(b) => StmtKind::Block(self.block(b)),
            StmtKind::Inline { call, body } => StmtKind::Inline { call, body: self.block(body) },
            StmtKind::Leave(call) => StmtKind::Leave(call),
            StmtKind::Assert { check, assertion } => {
                let check = match check {
                    AssertCheck::Holds(cond) => AssertCheck::Holds(self.expr(cond)),
                    AssertCheck::Compare { op, left, right } => {
                        AssertCheck::Compare { op, left: self.expr(left), right: self.expr(right) }
                    }
                };
                StmtKind::Assert { check, assertion }
            }
            StmtKind::WaitUntil { before, cond, line } => {
                StmtKind::WaitUntil { before: self.block(before), cond: self.expr(cond), line }
            }
            StmtKind::Swap(a, b) => StmtKind::Swap(a, b),
            StmtKind::StoreChunk { chunk, from, stores } => {
                StmtKind::StoreChunk { chunk, from, stores: self.block(stores) }
            }
            StmtKind::CopyChunkAsync { chunk, source, stores } => {
                StmtKind::CopyChunkAsync { chunk, source, stores: self.block(stores) }
            }
            StmtKind::WaitAsyncCopies => StmtKind::WaitAsyncCopies,
            StmtKind::Locked { array, index, body, line } => {
                StmtKind::Locked { array, index: self.expr(index), body: self.block(body), line }
            }
            StmtKind::PutRange(put) => StmtKind::PutRange(RangePut {
                target: put.target,
                source: put.source,
                pe: self.expr(put.pe),
                at: self.expr(put.at),
                lo: self.expr(put.lo),
                hi: self.expr(put.hi),
                signal: put.signal.map(|s| self.expr(s)),
                element: self.expr(put.element),
                line: put.line,
            }),
        }
    }

    fn range(&self, r: ForRange<TyId>) -> ForRange {
        match r {
            ForRange::Seq { start, end, inclusive, step, reverse } => ForRange::Seq {
                start: self.expr(start),
                end: self.expr(end),
                inclusive,
                step: step.map(|s| self.expr(s)),
                reverse,
            },
            ForRange::GridStride { start, end } => {
                ForRange::GridStride { start: self.expr(start), end: self.expr(end) }
            }
            ForRange::BlockStride { start, end } => {
                ForRange::BlockStride { start: self.expr(start), end: self.expr(end) }
            }
        }
    }

    pub(super) fn expr(&self, e: Expr<TyId>) -> Expr {
        crate::stack::deep(|| Expr { kind: self.expr_kind(e.kind), ty: self.ty(e.ty), span: e.span })
    }

    fn boxed(&self, e: Expr<TyId>) -> Box<Expr> {
        Box::new(self.expr(e))
    }

    fn exprs(&self, es: Vec<Expr<TyId>>) -> Vec<Expr> {
        es.into_iter().map(|e| self.expr(e)).collect()
    }

    fn expr_kind(&self, k: ExprKind<TyId>) -> ExprKind {
        match k {
            ExprKind::Int(v) => ExprKind::Int(v),
            ExprKind::Float(v) => ExprKind::Float(v),
            ExprKind::Bool(v) => ExprKind::Bool(v),
            ExprKind::Var(v) => ExprKind::Var(v),
            ExprKind::Unary(op, a) => ExprKind::Unary(op, self.boxed(*a)),
            ExprKind::Binary(op, a, b) => ExprKind::Binary(op, self.boxed(*a), self.boxed(*b)),
            ExprKind::Cast(a) => ExprKind::Cast(self.boxed(*a)),
            ExprKind::Load { array, index, line } => ExprKind::Load { array, index: self.boxed(*index), line },
            ExprKind::Len(a) => ExprKind::Len(a),
            ExprKind::Builtin(b) => ExprKind::Builtin(b),
            ExprKind::Call { func, args } => ExprKind::Call { func, args: self.exprs(args) },
            ExprKind::Atomic { op, array, index, args, line, order } => {
                ExprKind::Atomic { op, array, index: self.boxed(*index), args: self.exprs(args), line, order }
            }
            ExprKind::Shuffle { op, value, lane } => {
                ExprKind::Shuffle { op, value: self.boxed(*value), lane: self.boxed(*lane) }
            }
            ExprKind::Select { cond, then, otherwise } => {
                ExprKind::Select { cond: self.boxed(*cond), then: self.boxed(*then), otherwise: self.boxed(*otherwise) }
            }
            ExprKind::Vote { op, value } => ExprKind::Vote { op, value: self.boxed(*value) },
        }
    }
}
