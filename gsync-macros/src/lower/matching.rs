//! `match` on an integer or `bool`: literal patterns, `a | b`, ranges and `_`, checked
//! for exhaustiveness like rustc. It lowers to an `if`/`else if` chain on the scrutinee
//! (bound once to a hidden `scrutinee` unless it is a variable or a literal), or, as a
//! value inside an expression, to a chain of selects.

use super::{Binding, Block, Expr, ExprKind, Inferred, Lowerer, Place, StmtKind};
use crate::ir::{BinOp, Scalar, UnOp};
use crate::names;
use proc_macro2::Span;
use syn::spanned::Spanned;

/// A pattern, its literals lowered.
enum Pattern {
    /// `_`: every value.
    Any,
    /// A literal: `3`, `-1`, `true`, a `const`.
    Value(Expr),
    /// `a..=b`, `a..b`, `a..`, `..=b`.
    Range { start: Option<Expr>, end: Option<Expr>, inclusive: bool },
    /// `p | q | …`.
    Or(Vec<Pattern>),
}

impl Pattern {
    fn is_any(&self) -> bool {
        match self {
            Pattern::Any => true,
            Pattern::Or(ps) => ps.iter().any(Pattern::is_any),
            _ => false,
        }
    }
}

/// One arm, its pattern lowered; its body is lowered where it is used.
struct Arm<'m> {
    pattern: Pattern,
    body: &'m syn::Expr,
}

impl Lowerer<'_> {
    /// `match` as a statement (its arms' values are unit).
    pub(super) fn match_stmt(&mut self, m: &syn::ExprMatch, out: &mut Block) {
        let Some((scrutinee, arms)) = self.match_head(m, true, out) else { return };
        let chain = self.arm_chain(&scrutinee, &arms, &mut |l, body, out| l.arm_statement(body, out));
        out.extend(chain);
    }

    /// `place = match …` whose arms may hold statements: each arm assigns its value.
    pub(super) fn match_assign(&mut self, m: &syn::ExprMatch, place: Place, ty: super::types::TyId, out: &mut Block) {
        let Some((scrutinee, arms)) = self.match_head(m, true, out) else { return };
        let chain = self.arm_chain(&scrutinee, &arms, &mut |l, body, out| {
            l.scopes.push(Default::default());
            l.assign_value(place.clone(), ty, body, out);
            l.scopes.pop();
        });
        out.extend(chain);
    }

    /// `match` inside an expression: a chain of selects, the scrutinee read once per arm.
    pub(super) fn match_value(&mut self, m: &syn::ExprMatch) -> Option<Expr> {
        let span = m.span();
        let mut unused = Vec::new();
        let (scrutinee, arms) = self.match_head(m, false, &mut unused)?;
        let mut values = Vec::new();
        let mut arm_calls = Vec::new();
        for arm in &arms {
            let body = match arm.body {
                syn::Expr::Block(b) if b.label.is_none() && b.block.stmts.len() != 1 => {
                    self.diag.error(
                        arm.body.span(),
                        "an arm with statements can only be the value of a `let` or an assignment; bind the `match` with `let` first",
                    );
                    return None;
                }
                body => body,
            };
            let (value, calls) = self.collect_calls(|l| l.expr(body));
            values.push(value?);
            arm_calls.push(calls);
        }
        for v in &values[1..] {
            self.unify(values[0].ty, v.ty, v.span);
        }
        if arm_calls.iter().any(|calls| !calls.is_empty()) {
            return Some(self.match_value_with_calls(&scrutinee, arms, values, arm_calls, span));
        }
        // The last arm is reached when no earlier one matched: exhaustiveness makes it the catch-all.
        let mut arms_values: Vec<(Pattern, Expr)> = arms.into_iter().map(|a| a.pattern).zip(values).collect();
        let (_, mut value) = arms_values.pop()?;
        while let Some((pattern, then)) = arms_values.pop() {
            let Some(cond) = self.pattern_test(&scrutinee, &pattern) else {
                value = then;
                continue;
            };
            let ty = then.ty;
            value = self.expr_of(
                ExprKind::Select { cond: Box::new(cond), then: Box::new(then), otherwise: Box::new(value) },
                ty,
                span,
            );
        }
        Some(value)
    }

    /// A `match` value whose arms call device functions: a hidden variable that each arm
    /// assigns in its own branch, after its own calls, so that only the matching arm's run.
    fn match_value_with_calls(
        &mut self,
        scrutinee: &Expr,
        arms: Vec<Arm<'_>>,
        values: Vec<Expr>,
        arm_calls: Vec<Block>,
        span: Span,
    ) -> Expr {
        let ty = values[0].ty;
        let var = self.hidden_var("match_value", ty, span);
        self.pending.push(Self::stmt_of(StmtKind::Let { var, init: None }, span));
        let mut lowered = Vec::new();
        let count = arms.len();
        for (i, ((arm, value), mut calls)) in arms.iter().zip(values).zip(arm_calls).enumerate() {
            // As in the select chain, exhaustiveness makes the last arm the catch-all.
            let cond = if i + 1 == count { None } else { self.pattern_test(scrutinee, &arm.pattern) };
            let last = cond.is_none();
            let value_span = value.span;
            calls.push(Self::stmt_of(StmtKind::Assign { place: Place::Var(var), op: None, value }, value_span));
            lowered.push((cond, calls, arm.body.span()));
            if last {
                break;
            }
        }
        let chain = Self::if_chain(lowered);
        self.pending.extend(chain);
        Expr { kind: ExprKind::Var(var), ty, span }
    }

    /// The scrutinee and the arms, checked: a variable or literal scrutinee is used as it is,
    /// any other is bound to a hidden variable first (`bind`) or must be free of memory reads
    /// and effects, being read once per arm.
    fn match_head<'m>(&mut self, m: &'m syn::ExprMatch, bind: bool, out: &mut Block) -> Option<(Expr, Vec<Arm<'m>>)> {
        let span = m.span();
        let scrutinee = self.expr(&m.expr)?;
        let ty = match self.inferred(scrutinee.ty) {
            Inferred::Known(s) if s.is_int() || s == Scalar::Bool => Some(s),
            Inferred::AnyInt => None,
            other => {
                self.diag.error(
                    scrutinee.span,
                    format!(
                        "a kernel `match` works on integers and `bool`, found {}: compare it with `if`",
                        other.describe()
                    ),
                );
                return None;
            }
        };
        let mut arms = Vec::new();
        for arm in &m.arms {
            if let Some((_, guard)) = &arm.guard {
                self.diag.error(
                    guard.span(),
                    "match guards (`if …`) are not supported in kernels: test the condition with `if` inside the arm",
                );
                return None;
            }
            let pattern = self.pattern(&arm.pat, scrutinee.ty)?;
            arms.push(Arm { pattern, body: &arm.body });
        }
        // A scrutinee whose type inference has not settled yet is checked for inverted
        // ranges only.
        let mut sound = true;
        for arm in &arms {
            sound &= self.pattern_literals_ok(&arm.pattern, ty);
        }
        if !sound {
            return None;
        }
        if !self.exhaustive(&arms, ty) {
            let missing = match ty {
                Some(Scalar::Bool) => "`true` and `false`".to_owned(),
                Some(s) => format!("every `{}`", s.name()),
                None => "every integer".to_owned(),
            };
            self.diag.error(
                m.match_token.span().join(m.expr.span()).unwrap_or(span),
                format!("non-exhaustive patterns: the arms must cover {missing}; add a `_ => …` arm"),
            );
            return None;
        }
        let simple = matches!(scrutinee.kind, ExprKind::Var(_) | ExprKind::Int(_) | ExprKind::Bool(_));
        if simple {
            return Some((scrutinee, arms));
        }
        if bind {
            let sty = scrutinee.ty;
            let name = self.fresh_name("scrutinee");
            let var = self.new_var(crate::ir::Var {
                name: "scrutinee".into(),
                unique: name,
                ty: sty,
                mutable: false,
                is_param: false,
                span: scrutinee.span,
            });
            let sspan = scrutinee.span;
            out.push(Self::stmt_of(StmtKind::Let { var, init: Some(scrutinee) }, sspan));
            let read = self.expr_of(ExprKind::Var(var), sty, sspan);
            return Some((read, arms));
        }
        let mut reads = false;
        crate::ir_walk::each_expr(&scrutinee, &mut |e| {
            reads |= matches!(
                e.kind,
                ExprKind::Load { .. } | ExprKind::Atomic { .. } | ExprKind::Shuffle { .. } | ExprKind::Vote { .. }
            )
        });
        if reads {
            self.diag.error(
                scrutinee.span,
                "bind this scrutinee with `let` first: inside an expression, a `match` tests it once per arm",
            );
            return None;
        }
        Some((scrutinee, arms))
    }

    /// `if p1 { … } else if p2 { … } else { … }`: `body` lowers each arm's body into its block.
    fn arm_chain(
        &mut self,
        scrutinee: &Expr,
        arms: &[Arm<'_>],
        body: &mut dyn FnMut(&mut Self, &syn::Expr, &mut Block),
    ) -> Block {
        let mut lowered: Vec<(Option<Expr>, Block, Span)> = Vec::new();
        for arm in arms {
            let cond = self.pattern_test(scrutinee, &arm.pattern);
            let mut block = Vec::new();
            self.depth += 1;
            // An arm's device functions run only where its pattern matched.
            self.calls_first(&mut block, |l, out| body(l, arm.body, out));
            self.depth -= 1;
            let last = cond.is_none();
            lowered.push((cond, block, arm.body.span()));
            if last {
                break; // later arms are unreachable
            }
        }
        Self::if_chain(lowered)
    }

    /// `if c1 { b1 } else if c2 { b2 } … else { bn }` from the arms' tests and blocks, the
    /// last arm's test `None` where it catches every remaining value.
    fn if_chain(mut lowered: Vec<(Option<Expr>, Block, Span)>) -> Block {
        // Built from the last arm up: each arm is the `else` of the one before.
        let mut chain: Option<Block> = None;
        while let Some((cond, block, span)) = lowered.pop() {
            chain = Some(match cond {
                None => block,
                Some(cond) => vec![Self::stmt_of(StmtKind::If { cond, then: block, otherwise: chain.take() }, span)],
            });
        }
        chain.unwrap_or_default()
    }

    /// An arm's body as statements: a block's statements, or one expression statement.
    fn arm_statement(&mut self, body: &syn::Expr, out: &mut Block) {
        match body {
            syn::Expr::Block(b) if b.label.is_none() => {
                let block = self.block_in_scope(&b.block.stmts);
                out.extend(block);
            }
            other => {
                self.scopes.push(Default::default());
                self.expr_stmt(other, out);
                self.scopes.pop();
            }
        }
    }

    /// The condition under which `pattern` matches `scrutinee`; `None` for a catch-all.
    fn pattern_test(&mut self, scrutinee: &Expr, pattern: &Pattern) -> Option<Expr> {
        let span = scrutinee.span;
        let compare = |l: &mut Self, op: BinOp, bound: &Expr| l.binary_of(op, scrutinee.clone(), bound.clone(), span);
        match pattern {
            Pattern::Any => None,
            Pattern::Value(v) => Some(match v.kind {
                ExprKind::Bool(true) => scrutinee.clone(),
                ExprKind::Bool(false) => {
                    self.expr_of(ExprKind::Unary(UnOp::Not, Box::new(scrutinee.clone())), scrutinee.ty, span)
                }
                _ => compare(self, BinOp::Eq, v),
            }),
            Pattern::Range { start, end, inclusive } => {
                let low = start.as_ref().map(|s| compare(self, BinOp::Ge, s));
                let high = end.as_ref().map(|e| compare(self, if *inclusive { BinOp::Le } else { BinOp::Lt }, e));
                match (low, high) {
                    (Some(l), Some(h)) => Some(self.binary_of(BinOp::And, l, h, span)),
                    (l, h) => l.or(h),
                }
            }
            Pattern::Or(alternatives) => {
                let mut tests = Vec::new();
                for p in alternatives {
                    tests.push(self.pattern_test(scrutinee, p)?);
                }
                let mut tests = tests.into_iter();
                let first = tests.next()?;
                Some(tests.fold(first, |acc, t| self.binary_of(BinOp::Or, acc, t, span)))
            }
        }
    }

    /// Refuses what rustc refuses in a pattern: a literal out of the scrutinee's range, and a
    /// range whose lower bound passes its upper one. True if there is none.
    fn pattern_literals_ok(&mut self, pattern: &Pattern, ty: Option<Scalar>) -> bool {
        let range = ty.map(|ty| (ty, if ty == Scalar::Bool { (0, 1) } else { ty.int_range() }));
        let mut ok = true;
        let mut literal = |l: &mut Self, e: &Expr| match (e.kind.clone(), range) {
            (ExprKind::Int(v), Some((ty, (lo, hi)))) if v < lo || v > hi => {
                l.diag.error(e.span, format!("literal out of range for `{}`: the range is {lo}..={hi}", ty.name()));
                ok = false;
                None
            }
            (ExprKind::Int(v), _) => Some(v),
            _ => None,
        };
        match pattern {
            Pattern::Any => {}
            Pattern::Value(v) => {
                literal(self, v);
            }
            Pattern::Range { start, end, inclusive } => {
                let low = start.as_ref().and_then(|s| literal(self, s));
                let high = end.as_ref().and_then(|e| literal(self, e));
                if let (Some(low), Some(high), Some(at)) = (low, high, start.as_ref()) {
                    if *inclusive && low > high {
                        self.diag.error(at.span, "lower range bound must be less than or equal to upper");
                        return false;
                    }
                    if !*inclusive && low >= high {
                        self.diag.error(at.span, "lower range bound must be less than upper");
                        return false;
                    }
                }
            }
            Pattern::Or(alternatives) => {
                for p in alternatives {
                    ok &= self.pattern_literals_ok(p, ty);
                }
            }
        }
        ok
    }

    /// Lowers a pattern of a scrutinee of type `ty`.
    fn pattern(&mut self, pat: &syn::Pat, ty: super::types::TyId) -> Option<Pattern> {
        crate::stack::deep(|| self.pattern_inner(pat, ty))
    }

    fn pattern_inner(&mut self, pat: &syn::Pat, ty: super::types::TyId) -> Option<Pattern> {
        match pat {
            syn::Pat::Wild(_) => Some(Pattern::Any),
            syn::Pat::Paren(p) => self.pattern(&p.pat, ty),
            syn::Pat::Or(or) => {
                let cases: Option<Vec<Pattern>> = or.cases.iter().map(|c| self.pattern(c, ty)).collect();
                Some(Pattern::Or(cases?))
            }
            syn::Pat::Lit(lit) => self.pattern_value(&syn::Expr::Lit(lit.clone()), ty).map(Pattern::Value),
            syn::Pat::Path(p) => self.pattern_value(&syn::Expr::Path(p.clone()), ty).map(Pattern::Value),
            syn::Pat::Ident(p) if p.by_ref.is_none() && p.mutability.is_none() && p.subpat.is_none() => {
                match self.lookup(&names::rust_name(&p.ident)) {
                    Some(Binding::Const { .. }) => {
                        let path = syn::ExprPath { attrs: Vec::new(), qself: None, path: p.ident.clone().into() };
                        self.pattern_value(&syn::Expr::Path(path), ty).map(Pattern::Value)
                    }
                    _ => {
                        self.diag.error(
                            pat.span(),
                            format!(
                                "binding patterns are not supported in kernel `match`: write `_` and use the scrutinee (`{}` is no `const` in this kernel)",
                                p.ident
                            ),
                        );
                        None
                    }
                }
            }
            syn::Pat::Range(r) => {
                let start = match &r.start {
                    Some(s) => Some(self.pattern_value(s, ty)?),
                    None => None,
                };
                let end = match &r.end {
                    Some(e) => Some(self.pattern_value(e, ty)?),
                    None => None,
                };
                let inclusive = matches!(r.limits, syn::RangeLimits::Closed(_));
                Some(Pattern::Range { start, end, inclusive })
            }
            other => {
                self.diag.error(
                    other.span(),
                    "a kernel `match` arm's pattern is a literal, a `const`, a range (`1..=5`), `a | b` or `_`",
                );
                None
            }
        }
    }

    /// A literal or constant in a pattern, of the scrutinee's type.
    fn pattern_value(&mut self, e: &syn::Expr, ty: super::types::TyId) -> Option<Expr> {
        let value = match negative_literal(e) {
            Some(positive) => {
                let inner = self.expr(&positive)?;
                let ExprKind::Int(v) = inner.kind else { return None };
                self.expr_of(ExprKind::Int(-v), inner.ty, inner.span)
            }
            None => self.expr(e)?,
        };
        if !matches!(value.kind, ExprKind::Int(_) | ExprKind::Bool(_)) {
            self.diag.error(e.span(), "a kernel `match` pattern must be an integer or `bool` literal, or a `const`");
            return None;
        }
        self.unify(ty, value.ty, value.span);
        Some(value)
    }

    /// Whether the arms cover every value of the scrutinee's type (`None`: not known yet,
    /// so only a catch-all covers it).
    fn exhaustive(&self, arms: &[Arm<'_>], ty: Option<Scalar>) -> bool {
        if arms.iter().any(|a| a.pattern.is_any()) {
            return true;
        }
        let Some(ty) = ty else { return false };
        let (min, max) = if ty == Scalar::Bool { (0, 1) } else { ty.int_range() };
        let mut covered: Vec<(i128, i128)> = Vec::new();
        for arm in arms {
            intervals(&arm.pattern, min, max, &mut covered);
        }
        covered.sort();
        let mut next = min;
        for (lo, hi) in covered {
            if lo > next {
                return false;
            }
            next = next.max(hi.saturating_add(1));
        }
        next > max
    }
}

/// In a pattern, syn reads `-1` as one literal whose digits carry the sign: the
/// literal without it, to negate.
fn negative_literal(e: &syn::Expr) -> Option<syn::Expr> {
    let syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(i), .. }) = e else { return None };
    let digits = i.base10_digits().strip_prefix('-')?;
    let positive = syn::LitInt::new(&format!("{digits}{}", i.suffix()), i.span());
    Some(syn::Expr::Lit(syn::ExprLit { attrs: Vec::new(), lit: syn::Lit::Int(positive) }))
}

/// The values a pattern matches, as inclusive intervals within `min..=max`.
fn intervals(p: &Pattern, min: i128, max: i128, out: &mut Vec<(i128, i128)>) {
    let value = |e: &Expr| match e.kind {
        ExprKind::Int(v) => Some(v),
        ExprKind::Bool(b) => Some(i128::from(b)),
        _ => None,
    };
    match p {
        Pattern::Any => out.push((min, max)),
        Pattern::Value(v) => out.extend(value(v).map(|v| (v, v))),
        Pattern::Range { start, end, inclusive } => {
            let lo = start.as_ref().and_then(value).unwrap_or(min);
            let hi = match end.as_ref().and_then(value) {
                Some(e) if *inclusive => e,
                Some(e) => e - 1,
                None => max,
            };
            if lo <= hi {
                out.push((lo, hi));
            }
        }
        Pattern::Or(ps) => ps.iter().for_each(|p| intervals(p, min, max, out)),
    }
}

/// A `match` whose value needs statements: an arm body with statements, or a scrutinee
/// other than a variable or literal, which is bound once.
pub(super) fn needs_statements(m: &syn::ExprMatch) -> bool {
    let simple = matches!(&*m.expr, syn::Expr::Path(_) | syn::Expr::Lit(_));
    !simple
        || m.arms.iter().any(|a| match &*a.body {
            syn::Expr::Block(b) => b.block.stmts.len() != 1 || !matches!(b.block.stmts[0], syn::Stmt::Expr(_, None)),
            syn::Expr::If(_) | syn::Expr::Match(_) => true,
            _ => false,
        })
}
