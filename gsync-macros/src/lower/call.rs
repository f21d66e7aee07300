//! Calls of `#[device]` functions. Each call inlines the function's body,
//! lowered for the call's argument types, as a [`StmtKind::Inline`] among the
//! statements that run before the expression using its result: the checks,
//! the split and every emitter then see ordinary statements, and uniformity
//! flows through calls by construction.

use super::types::TyId;
use super::{Binding, Var};
use super::{Block, Expr, ExprKind, FnFrame, Lowerer, Place, Stmt, StmtKind};
use crate::ir::{ArrayId, CallId, InlinedCall, Scalar, UnOp};
use crate::names;
use crate::parse::{Bound, DeviceFn, Substitution};
use proc_macro2::Span;
use std::collections::HashMap;
use syn::spanned::Spanned;

/// The names a device function cannot take: the language's own functions (with the fused
/// integer builtins, [`is_reserved`]).
const RESERVED: &[&str] = &[
    "grid_sync",
    "gpu_sync",
    "sync_block",
    "wait_async_copies",
    "grid_stride",
    "block_stride",
    "shared_array",
    "shared_slice",
    "shfl",
    "shfl_up",
    "shfl_down",
    "shfl_xor",
    "min",
    "max",
    "thread_idx",
    "block_idx",
    "block_dim",
    "grid_dim",
    "global_id",
    "grid_size",
    "lane_id",
    "warp_size",
];

/// Whether `name` is a builtin of the language, which a device function cannot take.
pub fn is_reserved(name: &str) -> bool {
    RESERVED.contains(&name) || super::fused_int::builtin(name).is_some()
}

/// The most device-function calls one kernel inlines, counting calls inside inlined bodies.
/// Each call copies the function's body, so a chain of functions that each call the next
/// twice grows as 2^depth; the limit keeps the generated code, and the build, in proportion
/// to the source.
pub const MAX_INLINED_CALLS: usize = 1024;

/// An argument as the callee's parameter receives it.
enum Arg {
    Slice { array: ArrayId, span: Span },
    Scalar(Expr),
}

impl<'d> Lowerer<'d> {
    /// The device function `c` calls, if it names one of the module's.
    pub(super) fn device_function_of(&self, c: &syn::ExprCall) -> Option<&'d DeviceFn> {
        let syn::Expr::Path(p) = &*c.func else { return None };
        let segment = match p.path.segments.len() {
            1 => &p.path.segments[0],
            _ => return None,
        };
        if self.lookup(&names::rust_name(&segment.ident)).is_some() {
            return None; // a variable, array or constant of that name shadows the function
        }
        let items: &'d super::ModuleItems = self.items;
        items.function(&segment.ident.to_string())
    }

    /// A value that is the whole right side of a `let` or an assignment: the
    /// one place besides an expression statement where a call may pass `&mut`.
    pub(super) fn statement_value(&mut self, e: &syn::Expr) -> Option<Expr> {
        if let syn::Expr::Call(c) = strip(e) {
            if self.device_function_of(c).is_some() {
                self.statement_call = true;
            }
        }
        let value = self.expr(e);
        self.statement_call = false;
        value
    }

    /// `f(args);` as a statement.
    pub(super) fn device_call_statement(&mut self, f: &'d DeviceFn, c: &syn::ExprCall) {
        self.statement_call = true;
        let _ = self.inline_call(f, c);
        self.statement_call = false;
    }

    /// `f(args)` in an expression: its result.
    pub(super) fn device_call_value(&mut self, f: &'d DeviceFn, c: &syn::ExprCall) -> Option<Expr> {
        match self.inline_call(f, c)? {
            Some(value) => Some(value),
            None => {
                self.diag.error(
                    c.span(),
                    format!("`{}` returns nothing: call it as a statement, `{}(…);`", f.ident, f.ident),
                );
                None
            }
        }
    }

    /// Inlines a call into `pending`. `None` on an error; `Some(None)` for a
    /// function that returns nothing; else its result.
    fn inline_call(&mut self, f: &'d DeviceFn, c: &syn::ExprCall) -> Option<Option<Expr>> {
        let span = c.span();
        let name = f.ident.to_string();
        let may_write = std::mem::take(&mut self.statement_call);
        if let Some(at) = self.fn_frames.iter().position(|frame| frame.name == name) {
            // The functions between the first call of `name` and this one, if any.
            let through: Vec<String> =
                self.fn_frames[at + 1..].iter().map(|frame| format!("`{}`", frame.name)).collect();
            let through = if through.is_empty() { String::new() } else { format!(" (through {})", through.join(", ")) };
            self.diag.error_with_note(
                span,
                format!("`{name}` calls itself{through}: device functions are inlined, so they cannot be recursive"),
                f.span,
                format!("`{name}` is defined here"),
            );
            return None;
        }
        if c.args.len() != f.inputs.len() {
            self.diag.error(span, format!("`{name}` takes {} argument(s), found {}", f.inputs.len(), c.args.len()));
            return None;
        }
        if self.calls.len() >= MAX_INLINED_CALLS {
            if !self.inlining_exceeded {
                self.inlining_exceeded = true;
                let chain: Vec<String> = self.fn_frames.iter().map(|frame| format!("`{}`", frame.name)).collect();
                let within =
                    if chain.is_empty() { String::new() } else { format!(" (inside {})", chain.join(" → ")) };
                self.diag.error(
                    span,
                    format!(
                        "this call of `{name}`{within} is the kernel's {}th inlined call: device functions are inlined at every call, and a kernel inlines at most {MAX_INLINED_CALLS}; \
                         a function that calls another several times multiplies its copies; call it once in a loop instead",
                        MAX_INLINED_CALLS + 1
                    ),
                );
            }
            return None;
        }
        // One type variable per type parameter, pinned by the arguments.
        let params: Vec<TyId> = f.generics.iter().map(|_| self.types.unknown()).collect();
        self.explicit_types(f, c, &params)?;
        let mut args = Vec::new();
        let mut ok = true;
        for (param, arg) in f.inputs.iter().zip(&c.args) {
            match self.argument(f, &params, param, arg, may_write) {
                Some(a) => args.push(a),
                None => ok = false,
            }
        }
        if !ok || !self.distinct_mutable_slices(f, &args) {
            return None;
        }
        let subst = self.instance(f, &params, span)?;
        let ret = match &f.output {
            Some(ty) => Some(self.types.known(subst.scalar_type(ty)?)),
            None => None,
        };
        let call = CallId(self.calls.len());
        let result = ret.map(|ty| {
            let unique = self.fresh_name(&name);
            let var = self.new_var(Var { name: name.clone(), unique, ty, mutable: true, is_param: false, span });
            (var, ty)
        });
        self.calls.push(InlinedCall { function: name.clone(), span, leaves: false, result: result.map(|(v, _)| v) });
        let body = self.inlined_body(f, call, result, args, subst);
        self.calls[call.0].leaves = leaves(&body, call);
        if let Some((var, _)) = result {
            self.pending.push(Self::stmt_of(StmtKind::Let { var, init: None }, span));
        }
        self.pending.push(Self::stmt_of(StmtKind::Inline { call, body }, span));
        Some(result.map(|(var, ty)| Expr { kind: ExprKind::Var(var), ty, span }))
    }

    /// `f::<f32>(…)`: the type parameters named at the call.
    fn explicit_types(&mut self, f: &DeviceFn, c: &syn::ExprCall, params: &[TyId]) -> Option<()> {
        let syn::Expr::Path(p) = &*c.func else { return Some(()) };
        let syn::PathArguments::AngleBracketed(args) = &p.path.segments[0].arguments else { return Some(()) };
        if args.args.len() != f.generics.len() {
            self.diag.error(
                args.span(),
                format!("`{}` takes {} type argument(s), found {}", f.ident, f.generics.len(), args.args.len()),
            );
            return None;
        }
        for (arg, param) in args.args.iter().zip(params) {
            let syn::GenericArgument::Type(ty) = arg else {
                self.diag.error(arg.span(), "a device function's type arguments are element types, e.g. `::<f32>`");
                return None;
            };
            let Some(s) = self.scalar_type(ty) else {
                self.diag.error(ty.span(), "a device function's type arguments are element types, e.g. `::<f32>`");
                return None;
            };
            self.require(*param, s, ty.span(), "the type argument");
        }
        Some(())
    }

    /// One argument, checked against its parameter.
    fn argument(
        &mut self,
        f: &DeviceFn,
        params: &[TyId],
        param: &crate::parse::DeviceParam,
        arg: &syn::Expr,
        may_write: bool,
    ) -> Option<Arg> {
        let param_name = param.ident.to_string();
        match slice_shape(&param.ty) {
            Some((mutable, elem)) => {
                let (array, written) = self.slice_argument(arg, &param_name, &f.ident)?;
                let what = format!("passing it to `{}` as `&mut [_]`", f.ident);
                if mutable && self.refuse_write_to_read_only(array, &what, arg.span()) {
                    return None;
                }
                let info = &self.arrays[array.0];
                if mutable && !info.mutable {
                    let hint = match info.space {
                        crate::ir::ArraySpace::Global => {
                            format!("take it as `{}: &mut [{}]`", info.name, info.elem.name())
                        }
                        _ => format!("declare it `let mut {}`", info.name),
                    };
                    self.diag.error(
                        arg.span(),
                        format!(
                            "`{}` takes `{param_name}` as `&mut [_]`, but `{}` is not mutable: {hint}",
                            f.ident, info.name
                        ),
                    );
                    return None;
                }
                if mutable && written == Some(false) {
                    let array_name = info.name.clone();
                    self.diag.error(
                        arg.span(),
                        format!("`{}` takes `{param_name}` as `&mut [_]`: pass `&mut {array_name}`", f.ident),
                    );
                    return None;
                }
                if mutable && !may_write {
                    self.diag.error(
                        arg.span(),
                        format!("`{}` writes through `{param_name}`: call it as a statement of its own (`{}(…);`, `let x = {}(…);` or `x = {}(…);`), so that its writes are ordered as in Rust", f.ident, f.ident, f.ident, f.ident),
                    );
                    return None;
                }
                let elem_ty = self.array_elem_ty(array);
                let want = self.signature_type(f, params, elem)?;
                if self.types.unify(elem_ty, want).is_err() {
                    let found = self.inferred(elem_ty).describe();
                    let expected = quote::ToTokens::to_token_stream(elem).to_string();
                    self.diag.error(
                        arg.span(),
                        format!("`{}` takes `{param_name}: &[{expected}]`, found a slice of {found}", f.ident),
                    );
                    return None;
                }
                Some(Arg::Slice { array, span: arg.span() })
            }
            None => {
                let value = self.expr(arg)?;
                let want = self.signature_type(f, params, &param.ty)?;
                if let Err((found, expected)) = self.types.unify(value.ty, want) {
                    self.diag.error(
                        arg.span(),
                        format!(
                            "mismatched types: `{}` takes `{param_name}` as {}, found {}",
                            f.ident,
                            expected.describe(),
                            found.describe()
                        ),
                    );
                    return None;
                }
                Some(Arg::Scalar(value))
            }
        }
    }

    /// `a`, `&a` or `&mut a` naming an array; whether it was written `&mut`
    /// (`None` when written bare, which passes a slice parameter on as Rust's
    /// reborrow does).
    fn slice_argument(&mut self, arg: &syn::Expr, param: &str, f: &syn::Ident) -> Option<(ArrayId, Option<bool>)> {
        let (inner, written) = match strip(arg) {
            syn::Expr::Reference(r) => (strip(&r.expr), Some(r.mutability.is_some())),
            other => (other, None),
        };
        let name = match inner {
            syn::Expr::Path(p) => p.path.get_ident().map(names::rust_name),
            _ => None,
        };
        match name.as_deref().and_then(|n| self.lookup(n)) {
            Some(Binding::Array(a)) => Some((a, written)),
            _ => {
                self.diag.error(
                    arg.span(),
                    format!("`{f}` takes `{param}` as a slice: pass a slice parameter or an array by name, e.g. `&mut tile`"),
                );
                None
            }
        }
    }

    /// Rust's borrow rules: a slice passed as `&mut` is passed nowhere else in the call.
    fn distinct_mutable_slices(&mut self, f: &DeviceFn, args: &[Arg]) -> bool {
        let mut seen: HashMap<ArrayId, (bool, Span)> = HashMap::new();
        for (param, arg) in f.inputs.iter().zip(args) {
            let Arg::Slice { array, span } = arg else { continue };
            let mutable = slice_shape(&param.ty).is_some_and(|(m, _)| m);
            if let Some((other_mutable, _)) = seen.get(array) {
                if mutable || *other_mutable {
                    let name = self.arrays[array.0].name.clone();
                    self.diag.error(
                        *span,
                        format!("`{name}` is passed to `{}` twice, once as `&mut`: Rust's borrow rules forbid it, and the function may assume the slices are distinct", f.ident),
                    );
                    return false;
                }
            }
            seen.insert(*array, (mutable, *span));
        }
        true
    }

    /// A type in the callee's signature: a primitive, or one of its type parameters.
    fn signature_type(&mut self, f: &DeviceFn, params: &[TyId], ty: &syn::Type) -> Option<TyId> {
        let name = match ty {
            syn::Type::Path(p) if p.qself.is_none() => p.path.get_ident().map(|i| i.to_string()),
            syn::Type::Group(g) => return self.signature_type(f, params, &g.elem),
            syn::Type::Paren(p) => return self.signature_type(f, params, &p.elem),
            _ => None,
        }?;
        if let Some(i) = f.generics.iter().position(|g| g.ident == name) {
            return Some(params[i]);
        }
        Scalar::from_name(&name).map(|s| self.types.known(s))
    }

    /// The element type of each type parameter, once the arguments are lowered.
    fn instance(&mut self, f: &DeviceFn, params: &[TyId], span: Span) -> Option<Substitution> {
        let mut subst = Substitution::default();
        for (g, ty) in f.generics.iter().zip(params) {
            if self.types.is_unconstrained(*ty) {
                self.diag.error(
                    span,
                    format!(
                        "cannot infer `{}` for this call of `{}`: name it, e.g. `{}::<f32>(…)`",
                        g.ident, f.ident, f.ident
                    ),
                );
                return None;
            }
            // An unsuffixed literal argument falls back the way rustc's does.
            let fallback = match self.inferred(*ty) {
                super::Inferred::AnyInt => Some(Scalar::I32),
                super::Inferred::AnyFloat => Some(Scalar::F64),
                super::Inferred::Known(_) => None,
            };
            if let Some(s) = fallback {
                self.require(*ty, s, span, "the argument");
            }
            let s = self.types.scalar(*ty)?;
            if !g.bound.admits(s) {
                self.diag.error_with_note(
                    span,
                    format!("`{}` does not satisfy `{}: {}` of `{}`", s.name(), g.ident, g.bound.name(), f.ident),
                    g.ident.span(),
                    format!("`{}: {}` admits {}", g.ident, g.bound.name(), admitted(g.bound)),
                );
                return None;
            }
            subst.types.push((g.ident.to_string(), s));
        }
        Some(subst)
    }

    /// The function's body lowered for one call: its own scope (module
    /// constants and its parameters only), loops and type parameters.
    fn inlined_body(
        &mut self,
        f: &'d DeviceFn,
        call: CallId,
        result: Option<(crate::ir::VarId, TyId)>,
        args: Vec<Arg>,
        subst: Substitution,
    ) -> Block {
        let module = self.module_scope();
        let scopes = std::mem::replace(&mut self.scopes, vec![module, HashMap::new()]);
        let loops = std::mem::take(&mut self.loops);
        let depth = std::mem::replace(&mut self.depth, 2);
        let pending = std::mem::take(&mut self.pending);
        self.generics.push(subst);
        let read_only = f
            .inputs
            .iter()
            .zip(&args)
            .filter_map(|(param, arg)| match (arg, slice_shape(&param.ty)) {
                (Arg::Slice { array, .. }, Some((false, _))) => Some((*array, param.ident.to_string())),
                _ => None,
            })
            .collect();
        self.fn_frames.push(FnFrame { call, name: f.ident.to_string(), result, read_only });
        let mut body = Vec::new();
        for (param, arg) in f.inputs.iter().zip(args) {
            match arg {
                Arg::Slice { array, .. } => {
                    self.bind(names::rust_name(&param.ident), Binding::Array(array), param.ident.span())
                }
                Arg::Scalar(value) => {
                    let var = self.declare_var(&param.ident, value.ty, param.mutable_binding);
                    body.push(Self::stmt_of(StmtKind::Let { var, init: Some(value) }, param.span));
                }
            }
        }
        self.function_statements(f, result, &mut body);
        // A `return` that ends the body leaves nothing behind it.
        if matches!(body.last(), Some(Stmt { kind: StmtKind::Leave(c), .. }) if *c == call) {
            body.pop();
        }
        self.fn_frames.pop();
        self.generics.pop();
        self.pending = pending;
        self.depth = depth;
        self.loops = loops;
        self.scopes = scopes;
        body
    }

    fn function_statements(&mut self, f: &DeviceFn, result: Option<(crate::ir::VarId, TyId)>, out: &mut Block) {
        let stmts = &f.body.stmts;
        let Some((var, ty)) = result else {
            for s in stmts {
                self.stmt(s, out);
            }
            return;
        };
        match stmts.split_last() {
            Some((syn::Stmt::Expr(tail, None), rest)) if !matches!(tail, syn::Expr::Return(_)) => {
                for s in rest {
                    self.stmt(s, out);
                }
                self.calls_first(out, |l, out| l.assign_value(Place::Var(var), ty, tail, out));
            }
            Some((syn::Stmt::Expr(syn::Expr::Return(_), _), _)) => {
                for s in stmts {
                    self.stmt(s, out);
                }
            }
            _ => self.diag.error(
                f.body.brace_token.span.close(),
                format!("`{}` must end in its result: an expression without `;`, or `return`", f.ident),
            ),
        }
    }

    /// `return` or `return value` inside a device function.
    pub(super) fn function_return(&mut self, r: &syn::ExprReturn, out: &mut Block) {
        let span = r.span();
        let frame = self.fn_frames.last().expect("called inside a device function");
        let (call, result, name) = (frame.call, frame.result, frame.name.clone());
        match (&r.expr, result) {
            (Some(e), Some((var, ty))) => {
                let Some(value) = self.statement_value(e) else { return };
                self.unify(ty, value.ty, value.span);
                self.flush_pending(out);
                out.push(Self::stmt_of(StmtKind::Assign { place: Place::Var(var), op: None, value }, span));
            }
            (None, None) => {}
            (Some(e), None) => {
                self.diag.error(e.span(), format!("`{name}` returns nothing: declare its result, e.g. `-> u32`"));
                return;
            }
            (None, Some(_)) => {
                self.diag.error(span, format!("`{name}` returns a value: write `return value;`"));
                return;
            }
        }
        out.push(Self::stmt_of(StmtKind::Leave(call), span));
    }

    /// Whether a `return` here leaves a device function.
    pub(super) fn in_device_function(&self) -> bool {
        !self.fn_frames.is_empty()
    }

    /// An atomic in the statement whose expressions called device functions:
    /// the inlined bodies would run before it, out of Rust's order.
    pub(super) fn hoisted_before(&mut self, hoisted: &Block, lowered: &Block) {
        if hoisted.is_empty() {
            return;
        }
        for s in lowered {
            for e in crate::ir_walk::stmt_exprs(s) {
                let mut atomic = None;
                crate::ir_walk::each_expr(e, &mut |x| {
                    if matches!(x.kind, ExprKind::Atomic { .. }) && atomic.is_none() {
                        atomic = Some(x.span);
                    }
                });
                if let Some(at) = atomic {
                    self.diag.error(
                        at,
                        "bind this atomic's result with `let` first: the device functions this statement calls would otherwise run before it",
                    );
                    return;
                }
            }
        }
    }

    /// `a && b`/`a || b` whose right side calls device functions: `b`'s calls
    /// run only where `a` lets `b` run.
    pub(super) fn short_circuit(
        &mut self,
        op: crate::ir::BinOp,
        lhs: Expr,
        rhs: Expr,
        rhs_calls: Block,
        span: Span,
    ) -> Expr {
        let bool_ty = self.types.known(Scalar::Bool);
        let var = self.hidden_var(if op == crate::ir::BinOp::And { "and" } else { "or" }, bool_ty, span);
        self.pending.push(Self::stmt_of(StmtKind::Let { var, init: Some(lhs) }, span));
        let value = Expr { kind: ExprKind::Var(var), ty: bool_ty, span };
        let cond = match op {
            crate::ir::BinOp::And => value.clone(),
            _ => Expr { kind: ExprKind::Unary(UnOp::Not, Box::new(value.clone())), ty: bool_ty, span },
        };
        let mut then = rhs_calls;
        then.push(Self::stmt_of(StmtKind::Assign { place: Place::Var(var), op: None, value: rhs }, span));
        self.pending.push(Self::stmt_of(StmtKind::If { cond, then, otherwise: None }, span));
        value
    }

    /// `if c { a } else { b }` whose branches call device functions.
    pub(super) fn select_with_calls(&mut self, cond: Expr, branches: [(Expr, Block); 2], span: Span) -> Expr {
        let ty = branches[0].0.ty;
        let var = self.hidden_var("if_value", ty, span);
        self.pending.push(Self::stmt_of(StmtKind::Let { var, init: None }, span));
        let [then, otherwise] = branches.map(|(value, mut calls)| {
            calls.push(Self::stmt_of(StmtKind::Assign { place: Place::Var(var), op: None, value }, span));
            calls
        });
        self.pending.push(Self::stmt_of(StmtKind::If { cond, then, otherwise: Some(otherwise) }, span));
        Expr { kind: ExprKind::Var(var), ty, span }
    }

    pub(super) fn hidden_var(&mut self, base: &str, ty: TyId, span: Span) -> crate::ir::VarId {
        let unique = self.fresh_name(base);
        self.new_var(Var { name: base.to_owned(), unique, ty, mutable: true, is_param: false, span })
    }
}

/// Whether a parameter type is `&[T]`/`&mut [T]`: its mutability and element type.
fn slice_shape(ty: &syn::Type) -> Option<(bool, &syn::Type)> {
    match ty {
        syn::Type::Group(g) => slice_shape(&g.elem),
        syn::Type::Reference(r) => match &*r.elem {
            syn::Type::Slice(s) => Some((r.mutability.is_some(), &s.elem)),
            _ => None,
        },
        _ => None,
    }
}

fn strip(e: &syn::Expr) -> &syn::Expr {
    match e {
        syn::Expr::Paren(p) => strip(&p.expr),
        syn::Expr::Group(g) => strip(&g.expr),
        other => other,
    }
}

fn admitted(b: Bound) -> &'static str {
    match b {
        Bound::Int => "the integer types",
        Bound::Float => "`f32` and `f64`",
        Bound::Num => "the integer and float types",
    }
}

/// Whether a body leaves `call` early.
fn leaves(body: &Block, call: CallId) -> bool {
    let mut found = false;
    crate::ir_walk::each_stmt(body, &mut |s| found |= matches!(s.kind, StmtKind::Leave(c) if c == call));
    found
}
