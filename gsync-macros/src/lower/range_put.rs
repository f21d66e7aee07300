//! `a.put_range(pe, at, &source[lo..hi]);` and `a.put_range_signal(pe, at, &source[lo..hi],
//! flags, index, value);`: a block's copy of a range into another PE's part of a symmetric
//! slice, and the signal that follows it. Each operand is bound to a variable first, in Rust's
//! order, so that the copy's threads and its signal evaluate it once.

use super::communication::make_symmetric;
use super::types::TyId;
use super::{Block, Expr, ExprKind, Lowerer, StmtKind};
use crate::ir::{ArrayId, ArraySpace, AtomicOp, MemoryOrder, RangePut, Scalar};
use proc_macro2::Span;
use syn::spanned::Spanned;

/// The range of a `&source[lo..hi]` argument: each end, if written.
struct SourceRange<'m> {
    array: ArrayId,
    lo: Option<&'m syn::Expr>,
    hi: Option<&'m syn::Expr>,
    span: Span,
}

impl Lowerer<'_> {
    /// `a.put_range(…);` or `a.put_range_signal(…);` as a statement.
    pub(super) fn range_put(&mut self, m: &syn::ExprMethodCall, out: &mut Block) {
        let name = m.method.to_string();
        let signal = name == "put_range_signal";
        let Some(target) = self.range_target(m, &name) else { return };
        let want = if signal { 6 } else { 3 };
        let args: Vec<&syn::Expr> = m.args.iter().collect();
        if args.len() != want {
            self.diag.error(m.span(), format!("`{}` takes {want} arguments, found {}", usage(signal), args.len()));
            return;
        }
        let Some(source) = self.range_source(target, args[2], &name) else { return };
        let flags = if signal { self.signal_flags(args[3]) } else { None };
        if signal && flags.is_none() {
            return;
        }
        let span = m.span();
        let line = Self::line(span);
        let Some(pe) = self.bound_operand("range_pe", args[0], out, |l, e| {
            l.require(e.ty, Scalar::U32, e.span, &format!("the PE of `{name}`"))
        }) else {
            return;
        };
        let index = |l: &mut Self, e: &Expr| l.index_type(e);
        let Some(at) = self.bound_operand("range_at", args[1], out, index) else { return };
        let Some(lo) = self.range_end("range_lo", source.lo, source.array, false, source.span, out) else { return };
        let Some(hi) = self.range_end("range_hi", source.hi, source.array, true, source.span, out) else { return };
        let signal = match flags {
            Some(flags) => {
                let elem = self.arrays[flags.0].elem;
                let Some(flag) = self.bound_operand("signal_index", args[4], out, index) else { return };
                let Some(value) = self.bound_operand("signal_value", args[5], out, |l, e| {
                    l.require(e.ty, elem, e.span, &format!("the value of `{name}`"))
                }) else {
                    return;
                };
                Some(self.remote(AtomicOp::Signal, flags, flag, vec![pe.clone(), value], line, span))
            }
            None => None,
        };
        let elem = self.array_elem_ty(source.array);
        let first = self.expr_of(ExprKind::Load { array: source.array, index: Box::new(lo.clone()), line }, elem, span);
        let element = self.remote(AtomicOp::Put, target, at.clone(), vec![pe.clone(), first], line, span);
        let put = RangePut { target, source: source.array, pe, at, lo, hi, signal, element, line };
        out.push(Self::stmt_of(StmtKind::PutRange(put), span));
    }

    /// The receiver: a mutable `#[symmetric]` slice whose elements `put` can write.
    fn range_target(&mut self, m: &syn::ExprMethodCall, name: &str) -> Option<ArrayId> {
        let Some(target) = self.method_receiver_array(m) else {
            self.diag.error(
                m.receiver.span(),
                format!(
                    "`{name}` copies into a `#[symmetric] &mut [T]` slice parameter: name one, e.g. `halo.{name}(…)`"
                ),
            );
            return None;
        };
        let info = self.arrays[target.0].clone();
        if !info.symmetric {
            self.diag.error(
                m.method.span(),
                format!(
                    "`{name}` copies into the part of a symmetric slice that another PE holds: {}",
                    make_symmetric(&info, true)
                ),
            );
            return None;
        }
        if self.refuse_read_only_symmetric(target, name, m.receiver.span()) {
            return None;
        }
        if !super::methods::atomic_supported(AtomicOp::Put, info.elem) {
            self.diag.error(
                m.receiver.span(),
                format!("`{name}` copies elements as `put` writes them, which `{}` slices cannot be", info.elem.name()),
            );
            return None;
        }
        Some(target)
    }

    /// `&source[lo..hi]` (either end may be left out): a slice parameter or a shared array of
    /// `target`'s element type.
    fn range_source<'m>(&mut self, target: ArrayId, arg: &'m syn::Expr, name: &str) -> Option<SourceRange<'m>> {
        let written = match unwrap(arg) {
            syn::Expr::Reference(r) if r.mutability.is_none() => match unwrap(&r.expr) {
                syn::Expr::Index(ix) => match (unwrap(&ix.expr), unwrap(&ix.index)) {
                    (syn::Expr::Path(p), syn::Expr::Range(range)) => p.path.get_ident().map(|id| (id, range)),
                    _ => None,
                },
                _ => None,
            },
            _ => None,
        };
        let Some((ident, range)) = written else {
            self.diag.error(
                arg.span(),
                format!("`{name}` copies a range of a slice or shared array, written `&source[lo..hi]` (or `&source[..]` for all of it)"),
            );
            return None;
        };
        if matches!(range.limits, syn::RangeLimits::Closed(_)) {
            self.diag.error(range.span(), "write the source's range as `lo..hi` (for `lo..=hi`, `lo..hi + 1`)");
            return None;
        }
        let array = match self.lookup(&crate::names::rust_name(ident)) {
            Some(super::Binding::Array(array)) => array,
            _ => {
                self.diag.error(ident.span(), format!("`{ident}` is not a slice or an array of this kernel"));
                return None;
            }
        };
        let (source, target_info) = (self.arrays[array.0].clone(), &self.arrays[target.0]);
        if source.space == ArraySpace::Local {
            self.diag.error(
                ident.span(),
                format!("`{name}` copies a range that the whole block reads: take it from a slice parameter or a shared array, not from a thread's own array"),
            );
            return None;
        }
        if source.elem != target_info.elem {
            let message = format!(
                "mismatched types: `{}` holds `{}`, but `{}` holds `{}`: `{name}` copies elements of one type",
                target_info.name,
                target_info.elem.name(),
                source.name,
                source.elem.name()
            );
            self.diag.error(ident.span(), message);
            return None;
        }
        Some(SourceRange { array, lo: range.start.as_deref(), hi: range.end.as_deref(), span: arg.span() })
    }

    /// `put_range_signal`'s flags: a mutable `#[symmetric]` slice of a type `signal` stores.
    fn signal_flags(&mut self, arg: &syn::Expr) -> Option<ArrayId> {
        let array = match unwrap(arg) {
            syn::Expr::Path(p) => p.path.get_ident().and_then(|id| match self.lookup(&crate::names::rust_name(id)) {
                Some(super::Binding::Array(array)) => Some(array),
                _ => None,
            }),
            _ => None,
        };
        let Some(flags) = array else {
            self.diag.error(arg.span(), "name the flags the signal goes to: a `#[symmetric] &mut [u64]` slice parameter, e.g. `…, flags, 0, round)`");
            return None;
        };
        let info = self.arrays[flags.0].clone();
        if !info.symmetric {
            self.diag.error(
                arg.span(),
                format!(
                    "the signal goes to PE `pe`'s part of `{}`, which is not symmetric: {}",
                    info.name,
                    make_symmetric(&info, true)
                ),
            );
            return None;
        }
        if !super::methods::atomic_supported(AtomicOp::Signal, info.elem) {
            self.diag.error(
                arg.span(),
                format!(
                    "signal flags are `u32`, `i32`, `u64` or `i64`, but `{}` holds `{}`",
                    info.name,
                    info.elem.name()
                ),
            );
            return None;
        }
        if self.refuse_read_only_symmetric(flags, "put_range_signal", arg.span()) {
            return None;
        }
        Some(flags)
    }

    /// Refuses `name`'s write to symmetric `array` at `span` where `array` is read-only; true
    /// if it did.
    fn refuse_read_only_symmetric(&mut self, array: ArrayId, name: &str, span: Span) -> bool {
        self.refuse_unwritable(array, name, span, |info| {
            format!(
                "`{name}` writes another PE's part of `{}`, which is read-only: take it as `#[symmetric] {}: &mut [{}]`",
                info.name,
                info.name,
                info.elem.name()
            )
        })
    }

    /// An operand bound to a hidden variable, `let base = e;`, after the device functions it
    /// calls; `check` types it. The variable, read.
    fn bound_operand(
        &mut self,
        base: &str,
        e: &syn::Expr,
        out: &mut Block,
        check: impl FnOnce(&mut Self, &Expr),
    ) -> Option<Expr> {
        let mut bound = None;
        self.calls_first(out, |l, lowered| {
            let Some(value) = l.expr(e) else { return };
            check(l, &value);
            bound = Some(l.bind_hidden(base, value, lowered));
        });
        bound
    }

    /// `lo` or `hi` of the source's range (`end`: `hi`), bound as an operand: what was written,
    /// else 0 or the source's length.
    fn range_end(
        &mut self,
        base: &str,
        written: Option<&syn::Expr>,
        source: ArrayId,
        end: bool,
        span: Span,
        out: &mut Block,
    ) -> Option<Expr> {
        if let Some(e) = written {
            return self.bound_operand(base, e, out, |l, e| l.index_type(e));
        }
        let usize_ty = self.types.known(Scalar::Usize);
        let value = if end { ExprKind::Len(source) } else { ExprKind::Int(0) };
        let value = self.expr_of(value, usize_ty, span);
        Some(self.bind_hidden(base, value, out))
    }

    /// `let base = value;` into `out`, of a variable no source name reaches; the variable, read.
    fn bind_hidden(&mut self, base: &str, value: Expr, out: &mut Block) -> Expr {
        let (ty, span): (TyId, Span) = (value.ty, value.span);
        let var = self.hidden_var(base, ty, span);
        self.vars[var.0].mutable = false;
        out.push(Self::stmt_of(StmtKind::Let { var, init: Some(value) }, span));
        self.expr_of(ExprKind::Var(var), ty, span)
    }

    /// `array.op(pe, index, value)`'s atomic (`args`: the PE, then the value).
    fn remote(&mut self, op: AtomicOp, array: ArrayId, index: Expr, args: Vec<Expr>, line: u32, span: Span) -> Expr {
        let order = if op == AtomicOp::Signal { MemoryOrder::Release } else { MemoryOrder::Relaxed };
        let ty = self.array_elem_ty(array);
        self.expr_of(ExprKind::Atomic { op, array, index: Box::new(index), args, line, order }, ty, span)
    }
}

/// How `put_range` (`signal`: `put_range_signal`) is called.
pub(super) fn usage(signal: bool) -> &'static str {
    if signal {
        "put_range_signal(pe, at, &source[lo..hi], flags, index, value)"
    } else {
        "put_range(pe, at, &source[lo..hi])"
    }
}

/// An expression without its parentheses and invisible groups.
fn unwrap(e: &syn::Expr) -> &syn::Expr {
    match e {
        syn::Expr::Paren(p) => unwrap(&p.expr),
        syn::Expr::Group(g) => unwrap(&g.expr),
        other => other,
    }
}
