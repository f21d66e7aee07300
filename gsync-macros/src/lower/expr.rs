//! Expressions: literals, names, operators, casts, indexing and calls.

use super::fused_int;
use super::half_precision;
use super::method_sig::{ArgTy, MethodSig, RetTy};
use super::methods;
use super::{Binding, Lowerer};
use super::{Expr, ExprKind};
use crate::ir::*;
use crate::names;
use proc_macro2::Span;
use syn::spanned::Spanned;

/// The spelling of the block size as a constant in kernels.
const BLOCK_SIZE: &str = "BLOCK_SIZE";

/// The error for a `load_chunk` used where a value is expected.
const LOAD_CHUNK_AS_A_VALUE: &str = "`load_chunk` gives an array: bind it on its own, `let v = a.load_chunk::<4>(c);`";

impl Lowerer<'_> {
    /// Lowers an expression that produces a value; `None` after an error.
    pub(super) fn expr(&mut self, e: &syn::Expr) -> Option<Expr> {
        crate::stack::deep(|| self.expr_inner(e))
    }

    fn expr_inner(&mut self, e: &syn::Expr) -> Option<Expr> {
        let span = e.span();
        match e {
            syn::Expr::Lit(lit) => self.literal(&lit.lit),
            syn::Expr::Paren(p) => self.expr(&p.expr),
            syn::Expr::Group(g) => self.expr(&g.expr),
            syn::Expr::Path(p) => self.path_expr(p),
            syn::Expr::Unary(u) => self.unary(u),
            syn::Expr::Binary(b) => self.binary(b),
            syn::Expr::Cast(c) => self.cast(c),
            syn::Expr::Index(ix) => {
                let (array, index, line) = self.element(ix)?;
                let ty = self.array_elem_ty(array);
                Some(self.expr_of(ExprKind::Load { array, index: Box::new(index), line }, ty, span))
            }
            syn::Expr::MethodCall(m) => self.method_call(m),
            syn::Expr::Call(c) => self.call(c),
            syn::Expr::If(i) => self.select(i),
            syn::Expr::Match(m) => self.match_value(m),
            syn::Expr::Block(b) if b.label.is_none() && b.block.stmts.len() == 1 => match &b.block.stmts[0] {
                syn::Stmt::Expr(inner, None) => self.expr(inner),
                _ => self.value_block_error(span),
            },
            syn::Expr::Block(_) => self.value_block_error(span),
            other => {
                self.unsupported(other);
                None
            }
        }
    }

    fn value_block_error(&mut self, span: Span) -> Option<Expr> {
        self.diag.error(
            span,
            "a block with statements can only be the value of a `let` or an assignment; bind it with `let` first",
        );
        None
    }

    /// Reports syntax the DSL does not have, naming the construct.
    pub(super) fn unsupported(&mut self, e: &syn::Expr) {
        let what = match e {
            syn::Expr::Closure(_) => "closures are not supported in kernels",
            syn::Expr::Reference(_) => "references are not supported in kernels: index slices directly",
            syn::Expr::Struct(_) => "structs are not supported in kernels: pass each field as a parameter",
            syn::Expr::Field(_) => "field access is not supported in kernels: kernels have no structs or tuples",
            syn::Expr::Tuple(_) => "tuples are not supported in kernels",
            syn::Expr::Macro(m) => {
                let name = m.mac.path.segments.last().map(|s| s.ident.to_string()).unwrap_or_default();
                self.diag.error(e.span(), format!("unknown macro `{name}!`: kernels cannot call macros"));
                return;
            }
            syn::Expr::Try(_) => "the `?` operator is not supported in kernels",
            syn::Expr::Async(_) | syn::Expr::Await(_) => "async code is not supported in kernels",
            syn::Expr::Unsafe(_) => "`unsafe` blocks are not supported in kernels",
            syn::Expr::Let(_) => "`if let` and `while let` are not supported in kernels",
            syn::Expr::Range(_) => "a range can only be iterated by a `for` loop",
            syn::Expr::Array(_) | syn::Expr::Repeat(_) => {
                "an array can only initialise a `let`, e.g. `let mut a = [0u32; 4];`"
            }
            syn::Expr::Assign(_) => "an assignment is a statement here, not a value",
            syn::Expr::Return(_) | syn::Expr::Break(_) | syn::Expr::Continue(_) => {
                "`return`, `break` and `continue` are statements in kernels, not values"
            }
            syn::Expr::While(_) | syn::Expr::Loop(_) | syn::Expr::ForLoop(_) => {
                "a loop is a statement in kernels, not a value"
            }
            _ => "this expression is not supported in kernels",
        };
        self.diag.error(e.span(), what);
    }

    pub(super) fn literal(&mut self, lit: &syn::Lit) -> Option<Expr> {
        let span = lit.span();
        match lit {
            syn::Lit::Int(i) => {
                let value: u128 = match i.base10_parse() {
                    Ok(v) => v,
                    Err(_) => {
                        self.diag.error(span, "integer literal too large");
                        return None;
                    }
                };
                let ty = match i.suffix() {
                    "" => self.types.any_int(),
                    s => match Scalar::from_name(s) {
                        Some(t) if t.is_int() => self.types.known(t),
                        Some(t) if t.is_float() => self.types.known(t),
                        _ => {
                            self.diag.error(span, format!("unsupported literal suffix `{s}`"));
                            return None;
                        }
                    },
                };
                if self.types.scalar(ty).is_some_and(Scalar::is_float) {
                    return Some(self.expr_of(ExprKind::Float(value as f64), ty, span));
                }
                Some(self.expr_of(ExprKind::Int(value as i128), ty, span))
            }
            syn::Lit::Float(f) => {
                let value: f64 = match f.base10_parse() {
                    Ok(v) => v,
                    Err(_) => {
                        self.diag.error(span, "invalid float literal");
                        return None;
                    }
                };
                let ty = match f.suffix() {
                    "" => self.types.any_float(),
                    "f32" => self.types.known(Scalar::F32),
                    "f64" => self.types.known(Scalar::F64),
                    s => {
                        self.diag.error(span, format!("unsupported literal suffix `{s}`"));
                        return None;
                    }
                };
                Some(self.expr_of(ExprKind::Float(value), ty, span))
            }
            syn::Lit::Bool(b) => {
                let ty = self.types.known(Scalar::Bool);
                Some(self.expr_of(ExprKind::Bool(b.value), ty, span))
            }
            syn::Lit::Str(_) | syn::Lit::ByteStr(_) | syn::Lit::CStr(_) => {
                self.diag.error(span, "strings are not supported in kernels");
                None
            }
            syn::Lit::Char(_) | syn::Lit::Byte(_) => {
                self.diag.error(span, "character literals are not supported in kernels: use an integer");
                None
            }
            _ => {
                self.diag.error(span, "unsupported literal");
                None
            }
        }
    }

    fn path_expr(&mut self, p: &syn::ExprPath) -> Option<Expr> {
        let span = p.span();
        if let Some(ident) = p.path.get_ident() {
            let name = names::rust_name(ident);
            return match self.lookup(&name) {
                Some(Binding::Var(v)) => {
                    let ty = self.vars[v.0].ty;
                    Some(self.expr_of(ExprKind::Var(v), ty, span))
                }
                Some(Binding::Const { value, ty }) => {
                    if let ConstValue::Block(tree) = &value {
                        self.use_block_const(&name, tree, span);
                    }
                    Some(self.const_expr(value, ty, span))
                }
                Some(Binding::Array(_)) => {
                    self.diag
                        .error(span, format!("`{name}` is an array: index it (`{name}[i]`) or take `{name}.len()`"));
                    None
                }
                None if name == BLOCK_SIZE => Some(self.block_size(span)),
                None => {
                    self.diag.error(
                        span,
                        format!("cannot find `{name}` in this kernel (a kernel sees its parameters, its locals and the `const`s declared inside it)"),
                    );
                    None
                }
            };
        }
        let segments: Vec<String> = p.path.segments.iter().map(|s| s.ident.to_string()).collect();
        if segments.len() == 2 && segments[0] == "gsync" && segments[1] == BLOCK_SIZE {
            return Some(self.block_size(span));
        }
        match methods::associated_const(&p.path, &|name| self.type_named(name)) {
            Some((value, ty)) => Some(self.const_expr(value, ty, span)),
            None => {
                let text = quote::quote!(#p).to_string().replace(' ', "");
                self.diag.error(span, format!("unknown path `{text}`: kernels know local names, parameters and constants such as `u32::MAX` or `f32::consts::PI`"));
                None
            }
        }
    }

    pub(super) fn const_expr(&mut self, value: ConstValue, ty: Scalar, span: Span) -> Expr {
        let t = self.types.known(ty);
        let kind = match value {
            ConstValue::Int(v) => ExprKind::Int(v),
            ConstValue::Float(v) => ExprKind::Float(v),
            ConstValue::Bool(v) => ExprKind::Bool(v),
            ConstValue::Block(tree) => return self.block_const_expr(&tree, span),
        };
        self.expr_of(kind, t, span)
    }

    /// `BLOCK_SIZE`.
    fn block_size(&mut self, span: Span) -> Expr {
        let t = self.types.known(Scalar::Usize);
        self.expr_of(ExprKind::Builtin(Builtin::BlockSize), t, span)
    }

    /// A constant computed from `BLOCK_SIZE`, as the expression that computes it.
    fn block_const_expr(&mut self, tree: &BlockConst, span: Span) -> Expr {
        let t = self.types.known(tree.ty);
        let kind = match &tree.kind {
            BlockConstKind::Value(value) => return self.const_expr(value.clone(), tree.ty, span),
            BlockConstKind::BlockSize => return self.block_size(span),
            BlockConstKind::Unary(op, a) => ExprKind::Unary(*op, Box::new(self.block_const_expr(a, span))),
            BlockConstKind::Binary(op, a, b) => {
                let (a, b) = (self.block_const_expr(a, span), self.block_const_expr(b, span));
                ExprKind::Binary(*op, Box::new(a), Box::new(b))
            }
            BlockConstKind::Cast(a) => ExprKind::Cast(Box::new(self.block_const_expr(a, span))),
        };
        self.expr_of(kind, t, span)
    }

    fn unary(&mut self, u: &syn::ExprUnary) -> Option<Expr> {
        let span = u.span();
        let op = match u.op {
            syn::UnOp::Neg(_) => UnOp::Neg,
            syn::UnOp::Not(_) => UnOp::Not,
            _ => {
                self.diag.error(span, "dereferencing is not supported in kernels: there are no references");
                return None;
            }
        };
        let inner = self.expr(&u.expr)?;
        // `-128i8` is one literal to rustc's range check, so fold it here.
        if op == UnOp::Neg {
            match inner.kind {
                ExprKind::Int(v) => return Some(self.expr_of(ExprKind::Int(-v), inner.ty, span)),
                ExprKind::Float(v) => return Some(self.expr_of(ExprKind::Float(-v), inner.ty, span)),
                _ => {}
            }
        }
        let ty = inner.ty;
        Some(self.expr_of(ExprKind::Unary(op, Box::new(inner)), ty, span))
    }

    pub(super) fn binop(op: &syn::BinOp) -> Option<(BinOp, bool)> {
        use syn::BinOp as B;
        Some(match op {
            B::Add(_) => (BinOp::Add, false),
            B::Sub(_) => (BinOp::Sub, false),
            B::Mul(_) => (BinOp::Mul, false),
            B::Div(_) => (BinOp::Div, false),
            B::Rem(_) => (BinOp::Rem, false),
            B::BitAnd(_) => (BinOp::BitAnd, false),
            B::BitOr(_) => (BinOp::BitOr, false),
            B::BitXor(_) => (BinOp::BitXor, false),
            B::Shl(_) => (BinOp::Shl, false),
            B::Shr(_) => (BinOp::Shr, false),
            B::Eq(_) => (BinOp::Eq, false),
            B::Ne(_) => (BinOp::Ne, false),
            B::Lt(_) => (BinOp::Lt, false),
            B::Le(_) => (BinOp::Le, false),
            B::Gt(_) => (BinOp::Gt, false),
            B::Ge(_) => (BinOp::Ge, false),
            B::And(_) => (BinOp::And, false),
            B::Or(_) => (BinOp::Or, false),
            B::AddAssign(_) => (BinOp::Add, true),
            B::SubAssign(_) => (BinOp::Sub, true),
            B::MulAssign(_) => (BinOp::Mul, true),
            B::DivAssign(_) => (BinOp::Div, true),
            B::RemAssign(_) => (BinOp::Rem, true),
            B::BitAndAssign(_) => (BinOp::BitAnd, true),
            B::BitOrAssign(_) => (BinOp::BitOr, true),
            B::BitXorAssign(_) => (BinOp::BitXor, true),
            B::ShlAssign(_) => (BinOp::Shl, true),
            B::ShrAssign(_) => (BinOp::Shr, true),
            _ => return None,
        })
    }

    fn binary(&mut self, b: &syn::ExprBinary) -> Option<Expr> {
        let span = b.span();
        let Some((op, assigning)) = Self::binop(&b.op) else {
            self.diag.error(b.op.span(), "unsupported operator");
            return None;
        };
        if assigning {
            self.diag.error(span, "a compound assignment is a statement here, not a value");
            return None;
        }
        let lhs = self.expr(&b.left);
        let outer = std::mem::take(&mut self.pending);
        let rhs = self.expr(&b.right);
        let rhs_calls = std::mem::replace(&mut self.pending, outer);
        let (lhs, rhs) = (lhs?, rhs?);
        if op.is_logical() && !rhs_calls.is_empty() {
            // The right side's device functions run only where it is evaluated.
            let both = self.binary_of(op, lhs, rhs, span);
            let ExprKind::Binary(_, lhs, rhs) = both.kind else { unreachable!("binary_of builds a binary") };
            return Some(self.short_circuit(op, *lhs, *rhs, rhs_calls, span));
        }
        self.pending.extend(rhs_calls);
        Some(self.binary_of(op, lhs, rhs, span))
    }

    /// Types a binary operation the way rustc does for primitives.
    pub(super) fn binary_of(&mut self, op: BinOp, lhs: Expr, rhs: Expr, span: Span) -> Expr {
        let ty = if op.is_shift() {
            lhs.ty
        } else if op.is_logical() {
            let b = self.types.known(Scalar::Bool);
            self.require(lhs.ty, Scalar::Bool, lhs.span, "an operand of `&&`/`||`");
            self.require(rhs.ty, Scalar::Bool, rhs.span, "an operand of `&&`/`||`");
            b
        } else {
            self.unify(lhs.ty, rhs.ty, span);
            if op.is_comparison() {
                self.types.known(Scalar::Bool)
            } else {
                lhs.ty
            }
        };
        self.expr_of(ExprKind::Binary(op, Box::new(lhs), Box::new(rhs)), ty, span)
    }

    fn cast(&mut self, c: &syn::ExprCast) -> Option<Expr> {
        let span = c.span();
        let Some(target) = self.scalar_type(&c.ty) else {
            self.diag.error(c.ty.span(), "`as` casts only to primitive types (`u32`, `f32`, …)");
            return None;
        };
        let inner = self.expr(&c.expr)?;
        let from = self.types.scalar(inner.ty);
        if target.is_half() || from.is_some_and(Scalar::is_half) {
            self.diag.error(span, half_precision::cast_error(from, target));
            return None;
        }
        // Like rustc, a literal of unknown type takes the cast's type as a hint.
        let hint = match self.inferred(inner.ty) {
            super::Inferred::AnyInt => target.is_int(),
            super::Inferred::AnyFloat => target.is_float(),
            super::Inferred::Known(_) => false,
        };
        if hint {
            self.require(inner.ty, target, span, "the cast operand");
        }
        let ty = self.types.known(target);
        Some(self.expr_of(ExprKind::Cast(Box::new(inner)), ty, span))
    }

    /// `name[index]`: the array, the index (typed `u32` or `usize`) and the line.
    pub(super) fn element(&mut self, ix: &syn::ExprIndex) -> Option<(ArrayId, Expr, u32)> {
        let array = self.array_operand(&ix.expr)?;
        let index = self.expr(&ix.index)?;
        self.index_type(&index);
        Some((array, index, Self::line(ix.span())))
    }

    /// Indices are `usize` as in Rust; `u32` is accepted too.
    pub(super) fn index_type(&mut self, index: &Expr) {
        match self.inferred(index.ty) {
            super::Inferred::Known(Scalar::U32) | super::Inferred::Known(Scalar::Usize) => {}
            super::Inferred::AnyInt => {
                let usize_ty = self.types.known(Scalar::Usize);
                self.unify(index.ty, usize_ty, index.span);
            }
            other => {
                self.diag.error(index.span, format!("an index must be `usize` or `u32`, found {}", other.describe()))
            }
        }
    }

    /// An expression naming an array.
    fn array_operand(&mut self, e: &syn::Expr) -> Option<ArrayId> {
        let syn::Expr::Path(p) = e else {
            if matches!(e, syn::Expr::MethodCall(m) if m.method == "load_chunk") {
                self.diag.error(e.span(), LOAD_CHUNK_AS_A_VALUE);
                return None;
            }
            self.diag.error(e.span(), "only named slices and arrays can be indexed");
            return None;
        };
        let name = p.path.get_ident().map(names::rust_name);
        match name.as_deref().and_then(|n| self.lookup(n)) {
            Some(Binding::Array(a)) => Some(a),
            Some(_) => {
                self.diag.error(e.span(), "only slices and arrays can be indexed");
                None
            }
            None => {
                let text = quote::quote!(#p).to_string();
                self.diag.error(e.span(), format!("cannot find `{text}` in this kernel"));
                None
            }
        }
    }

    fn method_call(&mut self, m: &syn::ExprMethodCall) -> Option<Expr> {
        let span = m.span();
        let name = m.method.to_string();
        if m.turbofish.is_some()
            && m.method != "load_chunk"
            && m.method != "store_chunk"
            && m.method != "copy_chunk_async"
        {
            self.diag.error(m.method.span(), "kernel methods take no type arguments");
            return None;
        }
        // Array methods: len and the atomics.
        if let syn::Expr::Path(p) = &*m.receiver {
            if let Some(Binding::Array(array)) = p.path.get_ident().and_then(|i| self.lookup(&names::rust_name(i))) {
                return self.array_method(array, &name, m, span);
            }
        }
        let receiver = self.expr(&m.receiver)?;
        let args: Vec<Expr> = m.args.iter().map(|a| self.expr(a)).collect::<Option<_>>()?;
        let Some(recv_ty) = self.types.scalar(receiver.ty) else {
            let kind = if self.inferred(receiver.ty) == super::Inferred::AnyFloat { "float" } else { "integer" };
            self.diag.error(
                receiver.span,
                format!("can't call method `{name}` on an {kind} of ambiguous type: give it a type, e.g. `2u32` or `let x: u32 = …`"),
            );
            return None;
        };
        let Some(sig) = methods::method(&name, recv_ty) else {
            self.diag.error(
                m.method.span(),
                format!(
                    "unknown method `{name}` for `{}` in kernels (see docs/dsl.md for the supported methods)",
                    recv_ty.name()
                ),
            );
            return None;
        };
        let mut all = vec![receiver];
        all.extend(args);
        self.apply_sig(&name, sig, recv_ty, all, span)
    }

    /// Checks arguments against a method signature and builds the call.
    pub(super) fn apply_sig(
        &mut self,
        name: &str,
        sig: MethodSig,
        recv: Scalar,
        args: Vec<Expr>,
        span: Span,
    ) -> Option<Expr> {
        if args.len() != sig.args.len() {
            self.diag
                .error(span, format!("`{name}` takes {} argument(s), found {}", sig.args.len() - 1, args.len() - 1));
            return None;
        }
        for (arg, want) in args.iter().zip(sig.args.iter()) {
            match want {
                ArgTy::Same => self.require(arg.ty, recv, arg.span, &format!("an argument of `{name}`")),
                ArgTy::Scalar(s) => self.require(arg.ty, *s, arg.span, &format!("an argument of `{name}`")),
            }
        }
        let ty = match sig.ret {
            RetTy::Same => self.types.known(recv),
            RetTy::Scalar(s) => self.types.known(s),
        };
        Some(self.expr_of(ExprKind::Call { func: sig.func, args }, ty, span))
    }

    fn array_method(&mut self, array: ArrayId, name: &str, m: &syn::ExprMethodCall, span: Span) -> Option<Expr> {
        let info = self.arrays[array.0].clone();
        if name == "len" {
            if !m.args.is_empty() {
                self.diag.error(span, "`len` takes no arguments");
                return None;
            }
            let ty = self.types.known(Scalar::Usize);
            return Some(self.expr_of(ExprKind::Len(array), ty, span));
        }
        match name {
            "load_acquire" | "store_release" | "load_relaxed" | "store_relaxed" => {
                return self.ordered_access(array, name, m, false)
            }
            "get" | "put" | "signal" | "load_signal" => return self.remote_access(array, name, m, false),
            "with_lock" => {
                self.diag
                    .error(span, "`with_lock` is a statement: write `locks.with_lock(i, || { … });` on its own line");
                return None;
            }
            "load_chunk" => {
                self.diag.error(span, LOAD_CHUNK_AS_A_VALUE);
                return None;
            }
            "store_chunk" => {
                self.diag.error(
                    span,
                    "`store_chunk` is a statement: it returns nothing; write `a.store_chunk(c, v);` on its own line",
                );
                return None;
            }
            "copy_chunk_async" => {
                self.diag.error(
                    span,
                    "`copy_chunk_async` is a statement: it returns nothing; write `a.copy_chunk_async::<N>(c, source, s);` on its own line",
                );
                return None;
            }
            "put_range" | "put_range_signal" => {
                self.diag.error(
                    span,
                    format!(
                        "`{name}` is a statement: it returns nothing; write `a.{};` on its own line",
                        super::range_put::usage(name == "put_range_signal")
                    ),
                );
                return None;
            }
            _ => {}
        }
        let op = match name {
            "atomic_add" => AtomicOp::Add,
            "atomic_min" => AtomicOp::Min,
            "atomic_max" => AtomicOp::Max,
            "atomic_exch" => AtomicOp::Exch,
            "atomic_cas" => AtomicOp::Cas,
            _ => {
                self.diag.error(
                    m.method.span(),
                    format!("unknown method `{name}` on array `{}`: arrays have `len`, `atomic_add`, `atomic_min`, `atomic_max`, `atomic_exch`, `atomic_cas`, `load_acquire`, `load_relaxed`, `store_release`, `store_relaxed`, `load_chunk`, `store_chunk` and `with_lock`, and `#[symmetric]` slices `put`, `get`, `signal`, `load_signal`, `put_range` and `put_range_signal`", info.name),
                );
                return None;
            }
        };
        if info.space == ArraySpace::Local {
            self.diag.error(span, "atomics work on slices and shared arrays, not on a thread's own array");
            return None;
        }
        if self.refuse_write_to_read_only(array, &format!("`{name}`"), m.receiver.span()) {
            return None;
        }
        if !info.mutable {
            self.diag.error(
                m.receiver.span(),
                format!("`{}` is not mutable: atomics need `&mut [T]` or a `let mut` shared array", info.name),
            );
            return None;
        }
        if !methods::atomic_supported(op, info.elem) {
            self.diag.error(span, format!("`{name}` is not available for `{}` on CUDA GPUs", info.elem.name()));
            return None;
        }
        let want = if op == AtomicOp::Cas { 3 } else { 2 };
        // An optional last argument names the memory ordering: `Ordering::AcqRel`.
        let mut operands: Vec<&syn::Expr> = m.args.iter().collect();
        let mut order = MemoryOrder::Relaxed;
        if operands.len() == want + 1 {
            match operands.last().and_then(|last| self.ordering_arg(last)) {
                Some(Some(named)) => {
                    order = named;
                    operands.pop();
                }
                Some(None) => return None,
                None => {}
            }
        }
        if info.elem.is_half() && order != MemoryOrder::Relaxed {
            self.diag.error(
                span,
                format!("`{name}` on `{}` is relaxed only: order it with a `store_release` or `load_acquire` of a flag next to it", info.elem.name()),
            );
            return None;
        }
        if operands.len() != want {
            self.diag.error(
                span,
                format!(
                    "`{name}` takes {want} arguments (index{}) and optionally a memory ordering, e.g. `Ordering::AcqRel`",
                    if want == 3 { ", expected, new" } else { ", value" }
                ),
            );
            return None;
        }
        let mut args: Vec<Expr> = operands.iter().map(|a| self.expr(a)).collect::<Option<_>>()?;
        let index = args.remove(0);
        self.index_type(&index);
        if expr_has_effects(&index) {
            self.diag.error(index.span, "bind this index with `let` first: it has an atomic in it");
            return None;
        }
        for a in &args {
            self.require(a.ty, info.elem, a.span, &format!("a value for `{name}`"));
        }
        // With bounds checks, the operands are evaluated only where the index is in bounds.
        if self.refuse_collective_operands(
            std::iter::once(&index).chain(&args),
            "an atomic's operands are evaluated only where its index is in bounds",
        ) {
            return None;
        }
        let ty = self.types.known(info.elem);
        Some(self.expr_of(
            ExprKind::Atomic { op, array, index: Box::new(index), args, line: Self::line(span), order },
            ty,
            span,
        ))
    }

    fn call(&mut self, c: &syn::ExprCall) -> Option<Expr> {
        let span = c.span();
        let syn::Expr::Path(p) = &*c.func else {
            self.diag.error(c.func.span(), "only named functions can be called in kernels");
            return None;
        };
        if let Some(f) = self.device_function_of(c) {
            return self.device_call_value(f, c);
        }
        if let Some(name) = p.path.get_ident() {
            if let Some(binding) = self.lookup(&names::rust_name(name)) {
                let what = match binding {
                    Binding::Var(_) => "a variable",
                    Binding::Array(_) => "an array",
                    Binding::Const { .. } => "a constant",
                };
                self.diag.error(
                    c.func.span(),
                    format!("expected function, found `{name}`: {what} of that name is in scope here; rename it to call the function"),
                );
                return None;
            }
        }
        let segments: Vec<String> = p.path.segments.iter().map(|s| s.ident.to_string()).collect();
        let last = segments.last().cloned().unwrap_or_default();
        let args = || c.args.iter().collect::<Vec<_>>();
        // `f32::from_bits(x)` and friends.
        if segments.len() == 2 {
            if let Some(ty) = self.type_named(&segments[0]) {
                return self.associated_call(ty, &last, &args(), span);
            }
        }
        if let Some(builtin) = methods::builtin(&last) {
            if !c.args.is_empty() {
                self.diag.error(span, format!("`{last}()` takes no arguments"));
                return None;
            }
            let ty = self.types.known(methods::builtin_type(builtin));
            return Some(self.expr_of(ExprKind::Builtin(builtin), ty, span));
        }
        if let Some(func) = fused_int::builtin(&last) {
            return self.fused_int_call(func, &args(), span);
        }
        match last.as_str() {
            "shfl_up" | "shfl_down" | "shfl_xor" | "shfl" => self.shuffle(&last, &args(), span),
            "ballot" | "any" | "all" | "match_any" => self.vote(&last, &args(), span),
            "min" | "max" if c.args.len() == 2 => {
                let a = self.expr(&c.args[0]);
                let b = self.expr(&c.args[1]);
                let (a, b) = (a?, b?);
                self.unify(a.ty, b.ty, span);
                let Some(ty) = self.types.scalar(a.ty) else {
                    self.diag.error(
                        span,
                        format!("can't infer the type of `{last}`'s arguments: give one a type, e.g. `2u32`"),
                    );
                    return None;
                };
                let sig = methods::method(&last, ty)?;
                self.apply_sig(&last, sig, ty, vec![a, b], span)
            }
            "wait_until" => {
                self.diag.error(span, "`wait_until(|| cond)` is a statement: write it on its own line");
                None
            }
            "grid_sync" | "gpu_sync" | "sync_block" | "wait_async_copies" => {
                self.diag.error(span, format!("`{last}()` is a statement: write `{last}();` on its own line"));
                None
            }
            "grid_stride" | "block_stride" => {
                self.diag.error(span, format!("`{last}(a..b)` can only be iterated by a `for` loop"));
                None
            }
            "shared_array" => {
                self.diag
                    .error(span, "`shared_array::<T, N>()` can only initialise a `let` at the top level of the kernel");
                None
            }
            "shared_slice" => {
                self.diag
                    .error(span, "`shared_slice::<T>(len)` can only initialise a `let` at the top level of the kernel");
                None
            }
            _ => {
                self.diag.error(c.func.span(), format!("unknown function `{last}`: kernels call the gsync builtins and the `#[device]` functions of their `#[gsync::kernels]` module (see docs/dsl.md)"));
                None
            }
        }
    }

    fn associated_call(&mut self, ty: Scalar, name: &str, args: &[&syn::Expr], span: Span) -> Option<Expr> {
        let lowered: Vec<Expr> = args.iter().map(|a| self.expr(a)).collect::<Option<_>>()?;
        if ty.is_half() {
            match half_precision::constructor(ty, name) {
                Err(message) => {
                    self.diag.error(span, message);
                    return None;
                }
                Ok(Some(sig)) if lowered.len() == 1 => return self.apply_sig_static(name, sig, lowered, span),
                Ok(Some(_)) => {
                    self.diag.error(span, format!("`{}::{name}` takes 1 argument, found {}", ty.name(), lowered.len()));
                    return None;
                }
                Ok(None) => {}
            }
        }
        if name == "from_bits" && ty.is_float() && lowered.len() == 1 {
            let bits = if ty == Scalar::F32 { Scalar::U32 } else { Scalar::U64 };
            let sig = MethodSig { func: MathFn::FromBits, args: vec![ArgTy::Scalar(bits)], ret: RetTy::Scalar(ty) };
            return self.apply_sig_static(name, sig, lowered, span);
        }
        // `u32::max(a, b)`, `f32::sqrt(x)`: method call syntax in disguise.
        match methods::method(name, ty) {
            Some(sig) => {
                if let Some(first) = lowered.first() {
                    self.require(first.ty, ty, first.span, &format!("the receiver of `{}::{name}`", ty.name()));
                }
                self.apply_sig(name, sig, ty, lowered, span)
            }
            None => {
                self.diag.error(span, format!("unknown function `{}::{name}` in kernels", ty.name()));
                None
            }
        }
    }

    fn apply_sig_static(&mut self, name: &str, sig: MethodSig, args: Vec<Expr>, span: Span) -> Option<Expr> {
        for (arg, want) in args.iter().zip(sig.args.iter()) {
            if let ArgTy::Scalar(s) = want {
                self.require(arg.ty, *s, arg.span, &format!("the argument of `{name}`"));
            }
        }
        let RetTy::Scalar(ret) = sig.ret else { return None };
        let ty = self.types.known(ret);
        Some(self.expr_of(ExprKind::Call { func: sig.func, args }, ty, span))
    }

    fn shuffle(&mut self, name: &str, args: &[&syn::Expr], span: Span) -> Option<Expr> {
        if args.len() != 2 {
            self.diag.error(span, format!("`{name}(value, lane)` takes 2 arguments"));
            return None;
        }
        let value = self.expr(args[0]);
        let lane = self.expr(args[1]);
        let (value, lane) = (value?, lane?);
        self.require(lane.ty, Scalar::U32, lane.span, &format!("the lane argument of `{name}`"));
        let op = match name {
            "shfl_up" => ShuffleOp::Up,
            "shfl_down" => ShuffleOp::Down,
            "shfl_xor" => ShuffleOp::Xor,
            _ => ShuffleOp::Idx,
        };
        let ty = value.ty;
        Some(self.expr_of(ExprKind::Shuffle { op, value: Box::new(value), lane: Box::new(lane) }, ty, span))
    }

    /// `ballot(p)`, `any(p)`, `all(p)` (`p: bool`) and `match_any(v)` (`v` any scalar).
    fn vote(&mut self, name: &str, args: &[&syn::Expr], span: Span) -> Option<Expr> {
        let op = match name {
            "ballot" => VoteOp::Ballot,
            "any" => VoteOp::Any,
            "all" => VoteOp::All,
            _ => VoteOp::MatchAny,
        };
        let [arg] = args else {
            let what = if op == VoteOp::MatchAny { "value" } else { "predicate" };
            self.diag.error(span, format!("`{name}({what})` takes 1 argument"));
            return None;
        };
        let value = self.expr(arg)?;
        let ret = match op {
            VoteOp::Ballot | VoteOp::MatchAny => Scalar::U32,
            VoteOp::Any | VoteOp::All => Scalar::Bool,
        };
        if op != VoteOp::MatchAny {
            self.require(value.ty, Scalar::Bool, value.span, &format!("the predicate of `{name}`"));
        }
        let ty = self.types.known(ret);
        Some(self.expr_of(ExprKind::Vote { op, value: Box::new(value) }, ty, span))
    }

    /// `if c { a } else { b }` used as a value with pure branches.
    fn select(&mut self, i: &syn::ExprIf) -> Option<Expr> {
        let span = i.span();
        let Some((_, otherwise)) = &i.else_branch else {
            self.diag.error(span, "an `if` used as a value needs an `else`");
            return None;
        };
        let then_expr = match i.then_branch.stmts.as_slice() {
            [syn::Stmt::Expr(e, None)] => e,
            _ => return self.value_block_error(span),
        };
        let cond = self.expr(&i.cond);
        let outer = std::mem::take(&mut self.pending);
        let then = self.expr(then_expr);
        let then_calls = std::mem::take(&mut self.pending);
        let other = self.expr(otherwise);
        let other_calls = std::mem::replace(&mut self.pending, outer);
        let (cond, then, other) = (cond?, then?, other?);
        self.require(cond.ty, Scalar::Bool, cond.span, "an `if` condition");
        self.unify(then.ty, other.ty, span);
        if !then_calls.is_empty() || !other_calls.is_empty() {
            // Each branch's device functions run only in that branch.
            return Some(self.select_with_calls(cond, [(then, then_calls), (other, other_calls)], span));
        }
        let ty = then.ty;
        Some(self.expr_of(
            ExprKind::Select { cond: Box::new(cond), then: Box::new(then), otherwise: Box::new(other) },
            ty,
            span,
        ))
    }
}

/// Whether evaluating the expression twice would differ from once (atomics).
pub fn expr_has_effects(e: &Expr) -> bool {
    crate::stack::deep(|| expr_has_effects_inner(e))
}

fn expr_has_effects_inner(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Atomic { .. } => true,
        ExprKind::Int(_)
        | ExprKind::Float(_)
        | ExprKind::Bool(_)
        | ExprKind::Var(_)
        | ExprKind::Len(_)
        | ExprKind::Builtin(_) => false,
        ExprKind::Unary(_, a) | ExprKind::Cast(a) => expr_has_effects(a),
        ExprKind::Binary(_, a, b) => expr_has_effects(a) || expr_has_effects(b),
        ExprKind::Load { index, .. } => expr_has_effects(index),
        ExprKind::Call { args, .. } => args.iter().any(expr_has_effects),
        ExprKind::Shuffle { value, lane, .. } => expr_has_effects(value) || expr_has_effects(lane),
        ExprKind::Vote { value, .. } => expr_has_effects(value),
        ExprKind::Select { cond, then, otherwise } => {
            expr_has_effects(cond) || expr_has_effects(then) || expr_has_effects(otherwise)
        }
    }
}
