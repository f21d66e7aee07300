//! Statements: `let`, assignment, control flow, loops and the barriers.

use super::consts::Length;
use super::expr::expr_has_effects;
use super::types::{Inferred, TyId};
use super::{ArrayInit, Block, Expr, ExprKind, ForRange, Place, StmtKind};
use super::{Binding, LoopFrame, Lowerer};
use crate::ir::*;
use crate::names;
use proc_macro2::Span;
use syn::spanned::Spanned;

impl Lowerer<'_> {
    pub(super) fn stmts(&mut self, stmts: &[syn::Stmt]) -> Block {
        let mut out = Vec::new();
        for s in stmts {
            self.stmt(s, &mut out);
        }
        out
    }

    pub(super) fn stmt(&mut self, s: &syn::Stmt, out: &mut Block) {
        crate::stack::deep(|| self.calls_first(out, |l, lowered| l.stmt_inner(s, lowered)))
    }

    /// Runs `lower`, which pushes statements, and puts the device functions its expressions
    /// call before them, in `out`: the unit of code that runs whenever its first statement
    /// does. Every position that runs only sometimes (a branch, an arm, an `else if`
    /// condition, a right operand of `&&`) lowers through this or [`Self::collect_calls`], so
    /// that its calls run where it runs and nowhere else.
    pub(super) fn calls_first(&mut self, out: &mut Block, lower: impl FnOnce(&mut Self, &mut Block)) {
        let mut lowered = Vec::new();
        let ((), calls) = self.collect_calls(|l| lower(l, &mut lowered));
        self.hoisted_before(&calls, &lowered);
        out.extend(calls);
        out.extend(lowered);
    }

    /// Runs `lower` with the device-function calls it inlines collected apart: its result,
    /// and the statements that must run before it.
    pub(super) fn collect_calls<R>(&mut self, lower: impl FnOnce(&mut Self) -> R) -> (R, Block) {
        let outer = std::mem::take(&mut self.pending);
        let result = lower(self);
        let calls = std::mem::replace(&mut self.pending, outer);
        (result, calls)
    }

    /// Moves the statements the expressions lowered so far need into `out`,
    /// where a statement is about to be pushed in the middle of lowering.
    pub(super) fn flush_pending(&mut self, out: &mut Block) {
        out.append(&mut self.pending);
    }

    fn stmt_inner(&mut self, s: &syn::Stmt, out: &mut Block) {
        match s {
            syn::Stmt::Local(local) => self.local(local, out),
            syn::Stmt::Item(syn::Item::Const(c)) => self.const_item(c),
            syn::Stmt::Item(item) => {
                self.diag.error(item.span(), "items (functions, structs, `use`, …) cannot be declared inside a kernel")
            }
            syn::Stmt::Macro(m) if super::assert::is_assertion(&m.mac) => self.assertion(&m.mac, out),
            syn::Stmt::Macro(m) => {
                let name = m.mac.path.segments.last().map(|s| s.ident.to_string()).unwrap_or_default();
                self.diag.error(m.span(), format!("unknown macro `{name}!`: kernels cannot call macros"));
            }
            syn::Stmt::Expr(e, _) => self.expr_stmt(e, out),
        }
    }

    pub(super) fn expr_stmt(&mut self, e: &syn::Expr, out: &mut Block) {
        let span = e.span();
        match e {
            syn::Expr::Assign(a) => self.assign(&a.left, None, &a.right, span, out),
            syn::Expr::Binary(b) => match Self::binop(&b.op) {
                Some((op, true)) => self.assign(&b.left, Some(op), &b.right, span, out),
                _ => self.value_statement(e, out),
            },
            syn::Expr::If(i) => self.if_stmt(i, out),
            syn::Expr::Match(m) => self.match_stmt(m, out),
            syn::Expr::While(w) => self.while_stmt(w, out),
            syn::Expr::Loop(l) => {
                self.no_label(&l.label);
                let id = self.new_loop();
                let body = self.loop_body(id, &l.body.stmts);
                out.push(Self::stmt_of(StmtKind::Loop { id, body }, span));
            }
            syn::Expr::ForLoop(f) => self.for_stmt(f, out),
            syn::Expr::Block(b) if b.label.is_none() => {
                let block = self.block_in_scope(&b.block.stmts);
                out.push(Self::stmt_of(StmtKind::Block(block), span));
            }
            syn::Expr::Break(b) => {
                if b.label.is_some() {
                    self.diag.error(span, "labeled `break` is not supported in kernels");
                } else if b.expr.is_some() {
                    self.diag.error(span, "`break` with a value is not supported in kernels");
                } else if let Some(frame) = self.loops.last() {
                    out.push(Self::stmt_of(StmtKind::Break(frame.id), span));
                } else {
                    self.diag.error(span, "`break` outside of a loop");
                }
            }
            syn::Expr::Continue(c) => {
                if c.label.is_some() {
                    self.diag.error(span, "labeled `continue` is not supported in kernels");
                } else if let Some(frame) = self.loops.last() {
                    out.push(Self::stmt_of(StmtKind::Continue(frame.id), span));
                } else {
                    self.diag.error(span, "`continue` outside of a loop");
                }
            }
            syn::Expr::Return(r) if self.in_device_function() => self.function_return(r, out),
            syn::Expr::Return(r) => {
                if r.expr.is_some() {
                    self.diag.error(span, "a kernel returns nothing: write results into a `&mut [T]` parameter");
                } else {
                    out.push(Self::stmt_of(StmtKind::Return, span));
                }
            }
            syn::Expr::Call(c) if self.is_barrier_call(c) => self.barrier(c, out),
            syn::Expr::Call(c) if self.device_function_of(c).is_some() => {
                let f = self.device_function_of(c).expect("checked by the guard");
                self.device_call_statement(f, c);
            }
            syn::Expr::Macro(m) if super::assert::is_assertion(&m.mac) => self.assertion(&m.mac, out),
            syn::Expr::Call(c) if Self::is_swap_call(c) => self.swap(c, out),
            syn::Expr::Call(c) if is_call_to(c, "wait_until") => self.wait_until(c, out),
            syn::Expr::MethodCall(m) if m.method == "store_chunk" => self.store_chunk(m, out),
            syn::Expr::MethodCall(m) if m.method == "copy_chunk_async" => self.copy_chunk_async(m, out),
            syn::Expr::Call(c) if is_call_to(c, "wait_async_copies") => {
                if c.args.is_empty() {
                    out.push(Self::stmt_of(StmtKind::WaitAsyncCopies, span));
                } else {
                    self.diag.error(c.args.span(), "`wait_async_copies()` takes no arguments");
                }
            }
            syn::Expr::MethodCall(m) if m.method == "put_range" || m.method == "put_range_signal" => {
                self.range_put(m, out)
            }
            syn::Expr::MethodCall(m)
                if m.method == "with_lock"
                    || m.method == "store_release"
                    || m.method == "store_relaxed"
                    || m.method == "put"
                    || m.method == "signal" =>
            {
                match self.method_receiver_array(m) {
                    Some(array) if m.method == "with_lock" => self.with_lock(array, m, out),
                    Some(array) if m.method == "put" || m.method == "signal" => {
                        if let Some(put) = self.remote_access(array, &m.method.to_string(), m, true) {
                            out.push(Self::stmt_of(StmtKind::Expr(put), span));
                        }
                    }
                    Some(array) => {
                        if let Some(store) = self.ordered_access(array, &m.method.to_string(), m, true) {
                            out.push(Self::stmt_of(StmtKind::Expr(store), span));
                        }
                    }
                    None => self.value_statement(e, out),
                }
            }
            _ => self.value_statement(e, out),
        }
    }

    /// An expression statement: only atomics have an effect worth keeping.
    fn value_statement(&mut self, e: &syn::Expr, out: &mut Block) {
        if let syn::Expr::Call(c) = e {
            if let Some(f) = self.device_function_of(c) {
                self.device_call_statement(f, c);
                return;
            }
        }
        let Some(lowered) = self.expr(e) else { return };
        if expr_has_effects(&lowered) {
            out.push(Self::stmt_of(StmtKind::Expr(lowered), e.span()));
        } else {
            self.diag.error(
                e.span(),
                "this expression's value is unused: a kernel statement must assign, call an atomic or control flow",
            );
        }
    }

    /// The array a method is called on, if its receiver names one.
    pub(super) fn method_receiver_array(&self, m: &syn::ExprMethodCall) -> Option<ArrayId> {
        let syn::Expr::Path(p) = &*m.receiver else { return None };
        match p.path.get_ident().and_then(|i| self.lookup(&names::rust_name(i))) {
            Some(Binding::Array(array)) => Some(array),
            _ => None,
        }
    }

    /// The barrier a call names: `grid_sync`, `gpu_sync` or `sync_block`.
    fn barrier_name(c: &syn::ExprCall) -> Option<String> {
        let syn::Expr::Path(p) = &*c.func else { return None };
        let name = p.path.segments.last()?.ident.to_string();
        matches!(name.as_str(), "grid_sync" | "gpu_sync" | "sync_block").then_some(name)
    }

    fn is_barrier_call(&self, c: &syn::ExprCall) -> bool {
        Self::barrier_name(c).is_some()
    }

    fn barrier(&mut self, c: &syn::ExprCall, out: &mut Block) {
        let span = c.span();
        if !c.args.is_empty() {
            self.diag.error(span, "barriers take no arguments");
            return;
        }
        let scope = match Self::barrier_name(c).as_deref() {
            Some("grid_sync") => Some(SyncScope::Team),
            Some("gpu_sync") => Some(SyncScope::Gpu),
            _ => None,
        };
        let kind = match scope {
            Some(scope) => {
                self.grid_syncs += 1;
                StmtKind::GridSync { index: self.grid_syncs, line: Self::line(span), scope }
            }
            None => StmtKind::SyncBlock,
        };
        out.push(Self::stmt_of(kind, span));
    }

    fn no_label(&mut self, label: &Option<syn::Label>) {
        if let Some(l) = label {
            self.diag.error(l.span(), "loop labels are not supported in kernels");
        }
    }

    fn loop_body(&mut self, id: LoopId, stmts: &[syn::Stmt]) -> Block {
        self.loops.push(LoopFrame { id });
        let body = self.block_in_scope(stmts);
        self.loops.pop();
        body
    }

    fn local(&mut self, local: &syn::Local, out: &mut Block) {
        let span = local.span();
        let (ident, mutable, annotated) = match self.let_pattern(&local.pat) {
            Some(LetPattern::Wild) => {
                if let Some(init) = &local.init {
                    self.value_statement(&init.expr, out);
                }
                return;
            }
            Some(LetPattern::Name { ident, mutable, ty }) => (ident, mutable, ty),
            None => return,
        };
        if let Some(init) = &local.init {
            if let Some((_, diverge)) = &init.diverge {
                self.diag.error(diverge.span(), "`let … else` is not supported in kernels");
                return;
            }
        }
        let init_expr = local.init.as_ref().map(|i| &*i.expr);
        // Arrays: chunks, shared, repeat and list initialisers.
        if let Some(m) = init_expr.and_then(super::chunks::load_chunk_call) {
            self.let_chunk(&ident, mutable, annotated.as_deref(), m, out);
            return;
        }
        if let Some(e) = init_expr {
            if let Some(kind) = array_initializer(e) {
                self.let_array(&ident, mutable, annotated.as_deref(), e, kind, span, out);
                return;
            }
        }
        if let Some(ty) = &annotated {
            if matches!(**ty, syn::Type::Array(_)) {
                self.diag.error(ty.span(), "initialise an array with `[value; N]` or `[a, b, …]`");
                return;
            }
        }
        let annotated_scalar = match &annotated {
            Some(t) => match self.scalar_type(t) {
                Some(s) => Some(s),
                None => {
                    self.diag.error(
                        t.span(),
                        "unsupported type for a kernel variable: use a primitive type (`u32`, `f32`, `bool`, …)",
                    );
                    return;
                }
            },
            None => None,
        };
        match init_expr {
            None => {
                let Some(s) = annotated_scalar else {
                    self.diag.error(span, format!("give `{ident}` a type or a value, e.g. `let {ident}: u32;`"));
                    return;
                };
                let ty = self.types.known(s);
                let var = self.declare_var(&ident, ty, true);
                out.push(Self::stmt_of(StmtKind::Let { var, init: None }, span));
            }
            Some(e) if needs_statement_lowering(e) => {
                // `let x = if c { …; a } else { …; b };` becomes a declaration
                // and an `if` that assigns `x` in each branch.
                let ty = match annotated_scalar {
                    Some(s) => self.types.known(s),
                    None => self.types.unknown(),
                };
                let var = self.declare_var_hidden(&ident, ty, mutable);
                out.push(Self::stmt_of(StmtKind::Let { var, init: None }, span));
                self.assign_value(Place::Var(var), ty, e, out);
                self.bind(names::rust_name(&ident), Binding::Var(var), ident.span());
            }
            Some(e) => {
                let Some(value) = self.statement_value(e) else {
                    // Keep the name known so later uses do not pile up errors.
                    let ty = self.types.any_int();
                    self.declare_var(&ident, ty, mutable);
                    return;
                };
                if let Some(s) = annotated_scalar {
                    self.require(value.ty, s, value.span, &format!("the value of `{ident}`"));
                }
                let ty = value.ty;
                let var = self.declare_var(&ident, ty, mutable);
                out.push(Self::stmt_of(StmtKind::Let { var, init: Some(value) }, span));
            }
        }
    }

    /// Declares a variable whose name is bound only after its initialiser.
    fn declare_var_hidden(&mut self, ident: &syn::Ident, ty: TyId, mutable: bool) -> VarId {
        let name = names::rust_name(ident);
        let unique = self.fresh_name(&name);
        self.new_var(Var { name, unique, ty, mutable, is_param: false, span: ident.span() })
    }

    /// Lowers `place = <if/block with statements>` into assignments in each branch.
    pub(super) fn assign_value(&mut self, place: Place, ty: TyId, e: &syn::Expr, out: &mut Block) {
        crate::stack::deep(|| self.assign_value_inner(place, ty, e, out))
    }

    fn assign_value_inner(&mut self, place: Place, ty: TyId, e: &syn::Expr, out: &mut Block) {
        let span = e.span();
        match e {
            syn::Expr::If(i) => {
                let Some((_, otherwise)) = &i.else_branch else {
                    self.diag.error(span, "an `if` used as a value needs an `else`");
                    return;
                };
                let Some(cond) = self.expr(&i.cond) else { return };
                self.require(cond.ty, Scalar::Bool, cond.span, "an `if` condition");
                let then = self.value_block(place.clone(), ty, &i.then_branch.stmts);
                let mut other = Vec::new();
                self.scopes.push(Default::default());
                self.calls_first(&mut other, |l, out| l.assign_value(place, ty, otherwise, out));
                self.scopes.pop();
                out.push(Self::stmt_of(StmtKind::If { cond, then, otherwise: Some(other) }, span));
            }
            syn::Expr::Block(b) if b.label.is_none() => {
                let block = self.value_block(place, ty, &b.block.stmts);
                out.push(Self::stmt_of(StmtKind::Block(block), span));
            }
            syn::Expr::Match(m) if super::matching::needs_statements(m) => self.match_assign(m, place, ty, out),
            _ => {
                let Some(value) = self.statement_value(e) else { return };
                self.unify(ty, value.ty, value.span);
                self.flush_pending(out);
                out.push(Self::stmt_of(StmtKind::Assign { place, op: None, value }, span));
            }
        }
    }

    /// `{ stmts; tail }` whose tail is assigned to `place`.
    fn value_block(&mut self, place: Place, ty: TyId, stmts: &[syn::Stmt]) -> Block {
        self.scopes.push(Default::default());
        self.depth += 1;
        let mut out = Vec::new();
        match stmts.split_last() {
            Some((syn::Stmt::Expr(tail, None), rest)) => {
                for s in rest {
                    self.stmt(s, &mut out);
                }
                self.calls_first(&mut out, |l, out| l.assign_value(place, ty, tail, out));
            }
            _ => self.diag.error(
                stmts.last().map(|s| s.span()).unwrap_or_else(Span::call_site),
                "this block must end in a value (an expression without `;`)",
            ),
        }
        self.depth -= 1;
        self.scopes.pop();
        out
    }

    #[allow(clippy::too_many_arguments)]
    fn let_array(
        &mut self,
        ident: &syn::Ident,
        mutable: bool,
        annotated: Option<&syn::Type>,
        e: &syn::Expr,
        kind: ArrayInitKind,
        span: Span,
        out: &mut Block,
    ) {
        let annotated_elem = match annotated {
            Some(syn::Type::Array(a)) => self.scalar_type(&a.elem),
            _ => None,
        };
        match kind {
            ArrayInitKind::Shared => self.shared_array(ident, mutable, e, span),
            ArrayInitKind::SharedSlice => self.shared_slice(ident, mutable, e, span),
            ArrayInitKind::Repeat => {
                let syn::Expr::Repeat(r) = e else { return };
                let Some(len) = self.const_length(&r.len, &names::rust_name(ident)) else { return };
                let Some(value) = self.expr(&r.expr) else { return };
                if let Some(s) = annotated_elem {
                    self.require(value.ty, s, value.span, "the array's element");
                }
                self.local_array(ident, mutable, len, ArrayInit::Repeat(value), span, out);
            }
            ArrayInitKind::List => {
                let syn::Expr::Array(a) = e else { return };
                let values: Option<Vec<Expr>> = a.elems.iter().map(|x| self.expr(x)).collect();
                let Some(values) = values else { return };
                if values.is_empty() {
                    self.diag.error(span, "an empty array is not useful in a kernel");
                    return;
                }
                for v in &values[1..] {
                    self.unify(values[0].ty, v.ty, v.span);
                }
                if let Some(s) = annotated_elem {
                    self.require(values[0].ty, s, values[0].span, "the array's element");
                }
                let len = Length::Fixed(values.len() as u64);
                self.local_array(ident, mutable, len, ArrayInit::List(values), span, out);
            }
        }
    }

    pub(super) fn local_array(
        &mut self,
        ident: &syn::Ident,
        mutable: bool,
        len: Length,
        init: ArrayInit,
        span: Span,
        out: &mut Block,
    ) {
        let first = match &init {
            ArrayInit::Repeat(v) => v,
            ArrayInit::List(vs) | ArrayInit::Chunk { loads: vs, .. } => &vs[0],
        };
        // The element type may still be `{integer}`; the array records it
        // through its first element's type variable at emission time.
        let elem_ty = first.ty;
        let array = self.declare_array(ident, Scalar::I32, ArraySpace::Local, Some(&len), mutable);
        self.local_elem_types.push((array, elem_ty));
        out.push(Self::stmt_of(StmtKind::LetArray { array, init }, span));
    }

    fn shared_array(&mut self, ident: &syn::Ident, mutable: bool, e: &syn::Expr, span: Span) {
        if self.depth > 1 {
            // Still declared below, so that its uses raise no further errors.
            self.diag
                .error(span, "declare shared arrays at the top level of the kernel: they live for the whole block");
        }
        let syn::Expr::Call(c) = e else { return };
        let syn::Expr::Path(p) = &*c.func else { return };
        let generics = p.path.segments.last().map(|s| &s.arguments);
        let Some(syn::PathArguments::AngleBracketed(args)) = generics else {
            self.diag.error(span, "write `shared_array::<T, N>()`, e.g. `shared_array::<f32, 256>()`");
            return;
        };
        let parts: Vec<_> = args.args.iter().collect();
        let (elem, len) = match parts.as_slice() {
            [syn::GenericArgument::Type(t), syn::GenericArgument::Const(n)] => (t, n.clone()),
            [syn::GenericArgument::Type(t), syn::GenericArgument::Type(syn::Type::Path(n))] => {
                (t, syn::Expr::Path(syn::ExprPath { attrs: vec![], qself: None, path: n.path.clone() }))
            }
            _ => {
                self.diag.error(args.span(), "write `shared_array::<T, N>()` with a primitive T and a constant N");
                return;
            }
        };
        let Some(elem) = self.scalar_type(elem).filter(|s| *s != Scalar::Bool) else {
            self.diag.error(elem.span(), "a shared array holds a numeric primitive type");
            return;
        };
        let Some(len) = self.const_length(&len, &names::rust_name(ident)) else { return };
        if !c.args.is_empty() {
            self.diag.error(c.args.span(), "`shared_array` takes no arguments");
            return;
        }
        self.declare_array(ident, elem, ArraySpace::Shared, Some(&len), mutable);
    }

    /// `let tile = shared_slice::<T>(len);`: a slice of the block's dynamic shared memory,
    /// `len` elements long, `len` being evaluated by the host at launch (which
    /// `check::shared_len` makes sure it can).
    fn shared_slice(&mut self, ident: &syn::Ident, mutable: bool, e: &syn::Expr, span: Span) {
        if self.depth > 1 || !self.fn_frames.is_empty() {
            // Still declared below, so that its uses raise no further errors.
            self.diag
                .error(span, "declare shared slices at the top level of the kernel: they live for the whole block");
        }
        if !self.generics[0].types.is_empty() {
            // The generic module's `max_coresident_blocks` and `launch_config` take no
            // arguments to size the slices by.
            self.diag.error(
                span,
                "a generic kernel cannot declare shared slices yet: write the kernel for one element type",
            );
        }
        let syn::Expr::Call(c) = e else { return };
        let syn::Expr::Path(p) = &*c.func else { return };
        let generics = p.path.segments.last().map(|s| &s.arguments);
        let elem = match generics {
            Some(syn::PathArguments::AngleBracketed(args)) => match args.args.iter().collect::<Vec<_>>().as_slice() {
                [syn::GenericArgument::Type(t)] => Some(t),
                _ => None,
            },
            _ => None,
        };
        let Some(elem) = elem else {
            self.diag.error(span, "write `shared_slice::<T>(len)`, e.g. `shared_slice::<f32>(block_dim() as usize)`");
            return;
        };
        let Some(elem) = self.scalar_type(elem).filter(|s| *s != Scalar::Bool) else {
            self.diag.error(elem.span(), "a shared slice holds a numeric primitive type");
            return;
        };
        let [len] = c.args.iter().collect::<Vec<_>>()[..] else {
            self.diag.error(c.span(), "`shared_slice::<T>(len)` takes one argument, the length");
            return;
        };
        let Some(len) = self.expr(len) else { return };
        match self.inferred(len.ty) {
            Inferred::Known(Scalar::U32 | Scalar::Usize) => {}
            Inferred::AnyInt => {
                let usize_ty = self.types.known(Scalar::Usize);
                self.unify(len.ty, usize_ty, len.span);
            }
            // Still declared below, so that its uses raise no further errors.
            other => self.diag.error(
                len.span,
                format!("the length of a shared slice must be `usize` or `u32`, found {}", other.describe()),
            ),
        }
        let array = self.declare_array(ident, elem, ArraySpace::DynamicShared, None, mutable);
        self.shared_slices.push(crate::ir::SharedSliceDecl { array, len, line: Self::line(span) });
    }

    /// Declares the array `ident` of `elem` in `space`, `len` long where the length is
    /// known at expansion or from `BLOCK_SIZE` (a shared slice's is known at launch), and
    /// binds its name.
    pub(super) fn declare_array(
        &mut self,
        ident: &syn::Ident,
        elem: Scalar,
        space: ArraySpace,
        len: Option<&Length>,
        mutable: bool,
    ) -> ArrayId {
        let name = names::rust_name(ident);
        let unique = self.fresh_name(&name);
        let array = self.new_array(Array {
            name: name.clone(),
            unique,
            elem,
            space,
            len: len.and_then(Length::fixed),
            block_len: len.and_then(Length::per_block),
            mutable,
            symmetric: false,
            span: ident.span(),
        });
        self.bind(name, Binding::Array(array), ident.span());
        array
    }

    fn let_pattern(&mut self, pat: &syn::Pat) -> Option<LetPattern> {
        crate::stack::deep(|| self.let_pattern_inner(pat))
    }

    fn let_pattern_inner(&mut self, pat: &syn::Pat) -> Option<LetPattern> {
        match pat {
            syn::Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => {
                Some(LetPattern::Name { ident: p.ident.clone(), mutable: p.mutability.is_some(), ty: None })
            }
            syn::Pat::Wild(_) => Some(LetPattern::Wild),
            syn::Pat::Type(t) => match self.let_pattern(&t.pat)? {
                LetPattern::Name { ident, mutable, .. } => {
                    Some(LetPattern::Name { ident, mutable, ty: Some(t.ty.clone()) })
                }
                LetPattern::Wild => Some(LetPattern::Wild),
            },
            _ => {
                self.diag
                    .error(pat.span(), "only simple names can be bound in kernels (no tuples, structs or references)");
                None
            }
        }
    }

    fn assign(&mut self, left: &syn::Expr, op: Option<BinOp>, right: &syn::Expr, span: Span, out: &mut Block) {
        let Some((place, place_ty)) = self.place(left) else {
            let _ = self.expr(right);
            return;
        };
        if op.is_none() && needs_statement_lowering(right) {
            self.assign_value(place, place_ty, right, out);
            return;
        }
        let value = if op.is_none() { self.statement_value(right) } else { self.expr(right) };
        let Some(value) = value else { return };
        match op {
            Some(o) if o.is_shift() => {}
            _ => self.unify(place_ty, value.ty, span),
        }
        if let (Place::Elem { index, .. }, true) = (&place, expr_has_effects(&value)) {
            if expr_has_effects(index) {
                self.diag.error(index.span, "bind this index with `let` first: it has an atomic in it");
                return;
            }
        }
        out.push(Self::stmt_of(StmtKind::Assign { place, op, value }, span));
    }

    fn place(&mut self, e: &syn::Expr) -> Option<(Place, TyId)> {
        crate::stack::deep(|| self.place_inner(e))
    }

    fn place_inner(&mut self, e: &syn::Expr) -> Option<(Place, TyId)> {
        match e {
            syn::Expr::Path(p) if p.path.get_ident().is_some() => {
                let name = p.path.get_ident().map(names::rust_name).unwrap_or_default();
                match self.lookup(&name) {
                    Some(Binding::Var(v)) => {
                        let var = &self.vars[v.0];
                        if !var.mutable {
                            let what = if var.is_param { "parameter" } else { "variable" };
                            self.diag.error(
                                e.span(),
                                format!("cannot assign to immutable {what} `{name}`: declare it `mut {name}`"),
                            );
                            return None;
                        }
                        Some((Place::Var(v), var.ty))
                    }
                    Some(Binding::Array(_)) => {
                        self.diag
                            .error(e.span(), format!("cannot assign a whole array: assign elements, `{name}[i] = …`"));
                        None
                    }
                    Some(Binding::Const { .. }) => {
                        self.diag.error(e.span(), format!("cannot assign to the constant `{name}`"));
                        None
                    }
                    None => {
                        self.diag.error(e.span(), format!("cannot find `{name}` in this kernel"));
                        None
                    }
                }
            }
            syn::Expr::Index(ix) => {
                let (array, index, line) = self.element(ix)?;
                if self.refuse_write_to_read_only(array, "this assignment", ix.expr.span()) {
                    return None;
                }
                let info = &self.arrays[array.0];
                if self.tables.iter().any(|(_, table)| *table == array) {
                    let message = format!("cannot assign to an element of `{}`, a `const` table", info.name);
                    self.diag.error(ix.expr.span(), message);
                    return None;
                }
                if !info.mutable {
                    let hint = match info.space {
                        ArraySpace::Global => format!("take it as `{}: &mut [{}]`", info.name, info.elem.name()),
                        _ => format!("declare it `let mut {}`", info.name),
                    };
                    self.diag.error(
                        ix.expr.span(),
                        format!("cannot assign to an element of `{}`, which is not mutable: {hint}", info.name),
                    );
                    return None;
                }
                let ty = self.array_elem_ty(array);
                Some((Place::Elem { array, index: Box::new(index), line }, ty))
            }
            syn::Expr::Paren(p) => self.place(&p.expr),
            _ => {
                self.diag.error(e.span(), "only variables and slice elements can be assigned");
                None
            }
        }
    }

    fn if_stmt(&mut self, i: &syn::ExprIf, out: &mut Block) {
        crate::stack::deep(|| self.if_stmt_inner(i, out))
    }

    fn if_stmt_inner(&mut self, i: &syn::ExprIf, out: &mut Block) {
        let span = i.span();
        let cond = self.expr(&i.cond);
        if let Some(c) = &cond {
            self.require(c.ty, Scalar::Bool, c.span, "an `if` condition");
        }
        let then = self.block_in_scope(&i.then_branch.stmts);
        let otherwise = i.else_branch.as_ref().map(|(_, e)| {
            let mut block = Vec::new();
            match &**e {
                syn::Expr::Block(b) => block = self.block_in_scope(&b.block.stmts),
                syn::Expr::If(nested) => {
                    // The `else if` condition is tested only where the first one failed.
                    self.depth += 1;
                    self.calls_first(&mut block, |l, out| l.if_stmt(nested, out));
                    self.depth -= 1;
                }
                other => self.unsupported(other),
            }
            block
        });
        if let Some(cond) = cond {
            out.push(Self::stmt_of(StmtKind::If { cond, then, otherwise }, span));
        }
    }

    fn while_stmt(&mut self, w: &syn::ExprWhile, out: &mut Block) {
        self.no_label(&w.label);
        let span = w.span();
        let outer = std::mem::take(&mut self.pending);
        let cond = self.expr(&w.cond);
        let before_test = std::mem::replace(&mut self.pending, outer);
        if let Some(c) = &cond {
            self.require(c.ty, Scalar::Bool, c.span, "a `while` condition");
        }
        let id = self.new_loop();
        let body = self.loop_body(id, &w.body.stmts);
        let Some(cond) = cond else { return };
        if before_test.is_empty() {
            out.push(Self::stmt_of(StmtKind::While { id, cond, body }, span));
            return;
        }
        // The condition calls device functions: `loop { <calls>; if !cond { break; } body }`,
        // so that they run before every test, as the condition does.
        let bool_ty = self.types.known(Scalar::Bool);
        let cond_span = cond.span;
        let negated = Expr { kind: ExprKind::Unary(UnOp::Not, Box::new(cond)), ty: bool_ty, span: cond_span };
        let exit = Self::stmt_of(
            StmtKind::If { cond: negated, then: vec![Self::stmt_of(StmtKind::Break(id), cond_span)], otherwise: None },
            cond_span,
        );
        let mut looped = before_test;
        looped.push(exit);
        looped.extend(body);
        out.push(Self::stmt_of(StmtKind::Loop { id, body: looped }, span));
    }

    fn for_stmt(&mut self, f: &syn::ExprForLoop, out: &mut Block) {
        self.no_label(&f.label);
        let span = f.span();
        let Some(range) = self.for_range(&f.expr) else { return };
        let (ident, mutable) = match &*f.pat {
            syn::Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => (p.ident.clone(), p.mutability.is_some()),
            syn::Pat::Wild(w) => (syn::Ident::new("_", w.span()), false),
            other => {
                self.diag.error(other.span(), "a `for` loop binds a plain name");
                return;
            }
        };
        if mutable {
            self.diag.error(f.pat.span(), "the loop variable cannot be `mut` in kernels: copy it into a `let mut`");
            return;
        }
        let ty = match &range {
            ForRange::Seq { start, .. } | ForRange::GridStride { start, .. } | ForRange::BlockStride { start, .. } => {
                start.ty
            }
        };
        let id = self.new_loop();
        self.scopes.push(Default::default());
        let var = if ident == "_" {
            let unique = self.fresh_name("index");
            self.new_var(Var { name: "_".into(), unique, ty, mutable: false, is_param: false, span: ident.span() })
        } else {
            self.declare_var(&ident, ty, false)
        };
        let body = self.loop_body(id, &f.body.stmts);
        self.scopes.pop();
        out.push(Self::stmt_of(StmtKind::For { id, var, range, body }, span));
    }

    fn for_range(&mut self, e: &syn::Expr) -> Option<ForRange> {
        crate::stack::deep(|| self.for_range_inner(e))
    }

    fn for_range_inner(&mut self, e: &syn::Expr) -> Option<ForRange> {
        const FORMS: &str = "a kernel `for` loop iterates over `a..b`, `a..=b`, `(a..b).step_by(s)`, `(a..b).rev()`, `grid_stride(a..b)` or `block_stride(a..b)`";
        match e {
            syn::Expr::Range(_) => {
                let (start, end, inclusive) = self.range_bounds(e)?;
                Some(ForRange::Seq { start, end, inclusive, step: None, reverse: false })
            }
            syn::Expr::Paren(p) => self.for_range(&p.expr),
            syn::Expr::MethodCall(m) if m.method == "step_by" || m.method == "rev" => {
                let inner = strip_parens(&m.receiver);
                let ForRange::Seq { start, end, inclusive, step: None, reverse: false } = self.for_range(inner)? else {
                    self.diag.error(e.span(), FORMS);
                    return None;
                };
                if m.method == "rev" {
                    if inclusive || !m.args.is_empty() {
                        self.diag.error(e.span(), "`.rev()` works on `a..b` in kernels");
                        return None;
                    }
                    return Some(ForRange::Seq { start, end, inclusive, step: None, reverse: true });
                }
                if m.args.len() != 1 || inclusive {
                    self.diag.error(e.span(), "write `(a..b).step_by(s)`");
                    return None;
                }
                let step = self.expr(&m.args[0])?;
                self.require(step.ty, Scalar::Usize, step.span, "the step of `step_by`");
                if matches!(step.kind, ExprKind::Int(0)) {
                    self.diag.error(step.span, "`step_by(0)` never advances: the step must be positive");
                    return None;
                }
                Some(ForRange::Seq { start, end, inclusive, step: Some(step), reverse: false })
            }
            syn::Expr::Call(c) => {
                let name = match &*c.func {
                    syn::Expr::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()).unwrap_or_default(),
                    _ => String::new(),
                };
                if (name == "grid_stride" || name == "block_stride") && c.args.len() == 1 {
                    let (start, end, inclusive) = self.range_bounds(strip_parens(&c.args[0]))?;
                    if inclusive {
                        self.diag.error(c.args.span(), format!("`{name}` takes a half-open range `a..b`"));
                        return None;
                    }
                    return Some(if name == "grid_stride" {
                        ForRange::GridStride { start, end }
                    } else {
                        ForRange::BlockStride { start, end }
                    });
                }
                self.diag.error(e.span(), FORMS);
                None
            }
            _ => {
                self.diag.error(e.span(), FORMS);
                None
            }
        }
    }

    fn range_bounds(&mut self, e: &syn::Expr) -> Option<(Expr, Expr, bool)> {
        let syn::Expr::Range(r) = e else {
            self.diag.error(e.span(), "expected a range `a..b`");
            return None;
        };
        let (Some(start), Some(end)) = (&r.start, &r.end) else {
            self.diag.error(e.span(), "a kernel range needs both bounds, `a..b`");
            return None;
        };
        let start = self.expr(start);
        let end = self.expr(end);
        let (start, end) = (start?, end?);
        self.unify(start.ty, end.ty, e.span());
        Some((start, end, matches!(r.limits, syn::RangeLimits::Closed(_))))
    }
}

enum LetPattern {
    Name { ident: syn::Ident, mutable: bool, ty: Option<Box<syn::Type>> },
    Wild,
}

#[derive(Clone, Copy)]
enum ArrayInitKind {
    Shared,
    Repeat,
    List,
    SharedSlice,
}

fn array_initializer(e: &syn::Expr) -> Option<ArrayInitKind> {
    match e {
        syn::Expr::Repeat(_) => Some(ArrayInitKind::Repeat),
        syn::Expr::Array(_) => Some(ArrayInitKind::List),
        syn::Expr::Call(c) => match &*c.func {
            syn::Expr::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "shared_array") => {
                Some(ArrayInitKind::Shared)
            }
            syn::Expr::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "shared_slice") => {
                Some(ArrayInitKind::SharedSlice)
            }
            _ => None,
        },
        _ => None,
    }
}

/// An `if` or block whose branches contain statements, not just a value.
fn needs_statement_lowering(e: &syn::Expr) -> bool {
    crate::stack::deep(|| needs_statement_lowering_inner(e))
}

fn needs_statement_lowering_inner(e: &syn::Expr) -> bool {
    match e {
        syn::Expr::If(i) => {
            !matches!(i.then_branch.stmts.as_slice(), [syn::Stmt::Expr(_, None)])
                || i.else_branch.as_ref().is_some_and(|(_, e)| needs_statement_lowering(e))
        }
        syn::Expr::Block(b) => !matches!(b.block.stmts.as_slice(), [syn::Stmt::Expr(_, None)]),
        syn::Expr::Match(m) => super::matching::needs_statements(m),
        _ => false,
    }
}

/// Whether a call names the function `name` (with any path before it).
fn is_call_to(c: &syn::ExprCall, name: &str) -> bool {
    matches!(&*c.func, syn::Expr::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == name))
}

fn strip_parens(e: &syn::Expr) -> &syn::Expr {
    crate::stack::deep(|| strip_parens_inner(e))
}

fn strip_parens_inner(e: &syn::Expr) -> &syn::Expr {
    match e {
        syn::Expr::Paren(p) => strip_parens(&p.expr),
        syn::Expr::Group(g) => strip_parens(&g.expr),
        other => other,
    }
}
