//! The CPU-emulator backend: the kernel as one async Rust function per
//! thread, run by the runtime's scheduler. `sync_block()`, `grid_sync()` and
//! warp shuffles are await points; every array is an `EmuSlice` (relaxed
//! atomics, so that threads share memory soundly), bounds-checked always.

use crate::emit::assertions::AssertStops;
mod communication;
mod range_put;

use crate::check::Facts;
use crate::emit::block_size::BlockConstCode;
use crate::emit::rust_expr::{scalar_type, RustContext, RustExpr};
use crate::emit::rust_names::{array_ident, var_ident};
use crate::emit::rust_stmt::{self, RustStmts, View};
use crate::ir::*;
use crate::ir_walk::{each_expr, each_stmt, stmt_exprs};
use crate::split::Segment;
use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote, ToTokens};
use std::collections::HashSet;

/// The body of `emulate(launch, params…)`, with `launch` the runtime's `EmuLaunch`.
///
/// Each block gets a `Memory` value: views of the kernel's slices and its own
/// shared arrays. Thread futures borrow memory only through it, so that their
/// lifetime follows the scheduler's borrow of the block's `Memory`.
pub fn body(k: &Kernel, facts: &Facts) -> TokenStream {
    let private = crate::paths::private();
    let launch = Ident::new("launch", Span::mixed_site());
    let views = k.params.iter().filter_map(|p| match p {
        Param::Slice(a) if k.array(*a).symmetric => {
            let (id, t, name) = (array_ident(k, *a), scalar_type(k.array(*a).elem), &k.array(*a).name);
            Some(quote!(let #id: #private::EmuSymmetric<'_, #t> = #id.emu_symmetric(&#launch, #name)?;))
        }
        Param::Slice(a) => {
            let (id, t) = (array_ident(k, *a), scalar_type(k.array(*a).elem));
            Some(quote!(let #id: &#private::EmuSlice<#t> = #id.emu()?;))
        }
        Param::Scalar(_) => None,
    });
    let globals: Vec<ArrayId> =
        k.params.iter().filter_map(|p| if let Param::Slice(a) = p { Some(*a) } else { None }).collect();
    let shared: Vec<ArrayId> = (0..k.arrays.len()).map(ArrayId).filter(|a| k.array(*a).space.is_shared()).collect();
    // Computed from the call's buffers before the views below take their names.
    let slices = Ident::new("shared_slices", Span::mixed_site());
    let dynamic = (!k.shared_slices.is_empty()).then(|| {
        let args = crate::emit::shared_len::form_args(k);
        quote!(let #slices = self::dynamic_shared(#(#args),*);)
    });
    let grid = grid(k, facts, &globals, &shared, &k.body, |make_shared, thread| match &dynamic {
        Some(_) => quote!(#launch.run_shared(&#slices, #make_shared, #thread)),
        None => quote!(#launch.run(#make_shared, #thread)),
    });
    let block_size = block_size_ident();
    let sized = shared_sized_by_block(k, &shared).then(|| quote!(let #block_size: u32 = #launch.block_size()?;));
    quote! {
        #dynamic
        #(#views)*
        #sized
        #grid
    }
}

/// `fn emulate_segment_<i>(segment)`: segment `i` of a split kernel as an
/// emulator body, for `KernelForms::emulated_segments`. It reads its arguments back from
/// the launch, in the host code's order (the kernel's parameters, then the
/// segment's host values), and runs as a grid of its own: its shared arrays
/// are new for every launch.
pub fn segment(k: &Kernel, facts: &Facts, index: usize, segment: &Segment) -> TokenStream {
    let private = crate::paths::private();
    let name = segment_fn(index);
    let launch = Ident::new("segment", Span::mixed_site());
    let used = arrays_in(&segment.body);
    let mut globals = Vec::new();
    let mut reads = Vec::new();
    for (param, p) in k.params.iter().enumerate() {
        match p {
            Param::Slice(a) if used.contains(a) => {
                globals.push(*a);
                let (id, t) = (array_ident(k, *a), scalar_type(k.array(*a).elem));
                reads.push(if k.array(*a).symmetric {
                    let name = &k.array(*a).name;
                    quote!(let #id: #private::EmuSymmetric<'_, #t> = #launch.symmetric::<#t>(#param, #name)?;)
                } else {
                    quote!(let #id: &#private::EmuSlice<#t> = #launch.slice::<#t>(#param)?;)
                });
            }
            Param::Slice(_) => {}
            Param::Scalar(v) => reads.push(value_read(k, *v, param, &launch)),
        }
    }
    for (i, v) in segment.host_values.iter().enumerate() {
        reads.push(value_read(k, *v, k.params.len() + i, &launch));
    }
    let dynamic = !k.shared_slices.is_empty();
    let grid = grid(k, facts, &globals, &segment.shared, &segment.body, |make_shared, thread| {
        if dynamic {
            quote!(#launch.run_shared(#make_shared, #thread))
        } else {
            quote!(#launch.run(#make_shared, #thread))
        }
    });
    let block_size = block_size_ident();
    let sized = shared_sized_by_block(k, &segment.shared).then(|| quote!(let #block_size: u32 = #launch.block_size();));
    quote! {
        #[allow(unused_mut, unused_variables, unused_assignments, unreachable_code, unused_parens, clippy::all)]
        pub(super) fn #name(#launch: &#private::EmuSegment<'_>) -> #private::Result<()> {
            #(#reads)*
            #sized
            #grid
        }
    }
}

/// The name of segment `index`'s emulator body.
pub fn segment_fn(index: usize) -> Ident {
    format_ident!("emulate_segment_{index}")
}

/// `let v: T = segment.value::<T>(param)?;`
fn value_read(k: &Kernel, v: VarId, param: usize, launch: &Ident) -> TokenStream {
    let (id, t) = (var_ident(k, v), scalar_type(k.var(v).ty));
    quote!(let #id: #t = #launch.value::<#t>(#param)?;)
}

/// The arrays a block of statements names.
fn arrays_in(body: &Block) -> HashSet<ArrayId> {
    let mut arrays = HashSet::new();
    each_stmt(body, &mut |s| {
        if let StmtKind::Assign { place: Place::Elem { array, .. }, .. } | StmtKind::Locked { array, .. } = &s.kind {
            arrays.insert(*array);
        }
        for e in stmt_exprs(s) {
            each_expr(e, &mut |x| match &x.kind {
                ExprKind::Load { array, .. } | ExprKind::Len(array) | ExprKind::Atomic { array, .. } => {
                    arrays.insert(*array);
                }
                _ => {}
            });
        }
    });
    arrays
}

/// One grid run of `body`: the block's `Memory` (views of `globals`, already
/// bound to their idents, and fresh `shared` arrays), and each thread's future,
/// handed to `run(make_shared, thread)`.
fn grid(
    k: &Kernel,
    facts: &Facts,
    globals: &[ArrayId],
    shared: &[ArrayId],
    body: &Block,
    run: impl FnOnce(TokenStream, TokenStream) -> TokenStream,
) -> TokenStream {
    let private = crate::paths::private();
    let (ctx, memory) = (ctx_ident(), memory_ident());
    let mut fields = Vec::new();
    let mut inits = Vec::new();
    for a in globals {
        let (id, t) = (array_ident(k, *a), scalar_type(k.array(*a).elem));
        if k.array(*a).symmetric {
            fields.push(quote!(#id: #private::EmuSymmetric<'g, #t>));
        } else {
            fields.push(quote!(#id: &'g #private::EmuSlice<#t>));
        }
        inits.push(quote!(#id));
    }
    let lens = Ident::new("lens", Span::mixed_site());
    for a in shared {
        let info = k.array(*a);
        let (id, t) = (array_ident(k, *a), scalar_type(info.elem));
        let len = match &info.block_len {
            Some(tree) => {
                let len = tree.rust(&block_size_ident().into_token_stream());
                quote!((#len as usize))
            }
            None => {
                let len = info.len.unwrap_or(1) as usize;
                quote!(#len)
            }
        };
        fields.push(quote!(#id: #private::EmuSlice<#t>));
        match k.shared_slices.iter().position(|decl| decl.array == *a) {
            // The length the runtime computed for the launch; zeroed, like a shared array.
            Some(index) => inits.push(quote!(#id: #private::EmuSlice::zeroed(#lens[#index] as usize))),
            None => inits.push(quote!(#id: #private::EmuSlice::zeroed(#len))),
        }
    }
    let rebinds = k.params.iter().filter_map(|p| match p {
        Param::Scalar(v) if k.var(*v).mutable => {
            let id = var_ident(k, *v);
            Some(quote!(let mut #id = #id;))
        }
        _ => None,
    });
    // A swapped slice is a per-thread reference into the block's memory, which `swap` exchanges.
    let swapped = &facts.swapped;
    let views: Vec<TokenStream> = globals
        .iter()
        .filter(|a| swapped.contains(a))
        .map(|a| {
            let (id, t) = (array_ident(k, *a), scalar_type(k.array(*a).elem));
            quote!(let mut #id: &#private::EmuSlice<#t> = #memory.#id;)
        })
        .collect();
    let rebinds = rebinds.chain(views);
    let copies = async_copies_ident();
    let copies = uses_async_copies(body).then(|| quote!(let mut #copies = #private::EmuAsyncCopies::default();));
    // `debug_assert!`s are in the body, and ask the launch whether it checks them.
    let stmts = rust_stmt::block(&Emu { k, asserts: AssertStops::of(body, true), swapped }, body);
    let make_shared = if k.shared_slices.is_empty() {
        quote!(|| Memory { #(#inits,)* _kernel: ::core::marker::PhantomData })
    } else {
        quote!(|#lens: &[u64]| Memory { #(#inits,)* _kernel: ::core::marker::PhantomData })
    };
    let thread = quote! {
        |#ctx: &#private::ThreadCtx<'_>, #memory: &Memory<'_>| {
            ::std::boxed::Box::pin(async move {
                #(#rebinds)*
                #copies
                #stmts
            })
        }
    };
    let run = run(make_shared, thread);
    quote! {
        struct Memory<'g> { #(#fields,)* _kernel: ::core::marker::PhantomData<&'g ()> }
        #run
    }
}

/// Whether `body` issues or waits for async copies: its threads then keep a list of them.
fn uses_async_copies(body: &Block) -> bool {
    let mut found = false;
    crate::ir_walk::each_stmt(body, &mut |s| {
        found |= matches!(s.kind, StmtKind::CopyChunkAsync { .. } | StmtKind::WaitAsyncCopies);
    });
    found
}

/// The block size in an emulator body that sizes shared arrays by it.
fn block_size_ident() -> Ident {
    Ident::new("block_size", Span::mixed_site())
}

/// Whether one of `shared` is sized by `BLOCK_SIZE`.
fn shared_sized_by_block(k: &Kernel, shared: &[ArrayId]) -> bool {
    shared.iter().any(|a| k.array(*a).block_len.is_some())
}

fn ctx_ident() -> Ident {
    Ident::new("ctx", Span::mixed_site())
}

/// A thread's async copies in flight (`copy_chunk_async`), which `wait_async_copies()` lands.
fn async_copies_ident() -> Ident {
    Ident::new("async_copies", Span::mixed_site())
}

fn memory_ident() -> Ident {
    Ident::new("memory", Span::mixed_site())
}

struct Emu<'k> {
    k: &'k Kernel,
    /// How the body's failed assertions stop, as on the device.
    asserts: AssertStops,
    /// The slice parameters a `swap` exchanges: per-thread references.
    swapped: &'k HashSet<ArrayId>,
}

impl Emu<'_> {
    fn expr(&self, e: &Expr) -> TokenStream {
        RustExpr { k: self.k, ctx: self }.expr(e)
    }

    /// The `EmuSlice` expression of an array.
    fn slice(&self, a: ArrayId) -> TokenStream {
        let id = array_ident(self.k, a);
        match self.k.array(a).space {
            ArraySpace::Local => quote!(#id),
            ArraySpace::Global if self.swapped.contains(&a) => quote!(#id),
            _ => {
                let memory = memory_ident();
                quote!(#memory.#id)
            }
        }
    }

    /// `let a = [v; N];` or `let a = [x, y, …];`: a zeroed `EmuSlice`, then filled.
    fn let_array(&self, array: ArrayId, init: &ArrayInit) -> TokenStream {
        let private = crate::paths::private();
        let (info, ctx) = (self.k.array(array), ctx_ident());
        let id = array_ident(self.k, array);
        let t = scalar_type(info.elem);
        let len = match &info.block_len {
            Some(tree) => {
                let len = tree.rust(&quote!(#ctx.block_dim()));
                quote!((#len as usize))
            }
            None => {
                let len = info.len.unwrap_or(1) as usize;
                quote!(#len)
            }
        };
        let id_num = array.0 as u32;
        let fill = match init {
            ArrayInit::Repeat(v) => {
                let v = self.expr(v);
                quote! {
                    let value: #t = #v;
                    for i in 0..#len as u64 { #id.store(i, value, #ctx, #id_num, 0); }
                }
            }
            ArrayInit::List(values) => {
                let stores = values.iter().enumerate().map(|(i, v)| {
                    let (v, i) = (self.expr(v), i as u64);
                    quote!(#id.store(#i, #v, #ctx, #id_num, 0);)
                });
                quote!(#(#stores)*)
            }
            ArrayInit::Chunk { chunk, .. } => {
                let (source, source_num) = (self.slice(chunk.array), chunk.array.0 as u32);
                let (index, n, line) = (var_ident(self.k, chunk.index), chunk.len, chunk.line);
                quote! {
                    if let Some(start) = #source.chunk_start(#index as u64, #n, #ctx, #source_num, #line) {
                        for j in 0..#n {
                            #id.store(j, #source.load(start + j, #ctx, #source_num, #line), #ctx, #id_num, 0);
                        }
                    }
                }
            }
        };
        quote! {
            let #id: #private::EmuSlice<#t> = #private::EmuSlice::zeroed(#len);
            #fill
        }
    }

    /// An `assert!`, stopping as on the device; a `debug_assert!` asks the launch whether
    /// it checks them (its bounds-check setting, as on the device).
    fn assertion(&self, check: &AssertCheck, a: &Assertion) -> TokenStream {
        let ctx = ctx_ident();
        let (n, line) = (a.number, a.line);
        let stop = if self.asserts.ends_thread(n) { quote!(return;) } else { quote!() };
        let checked = match check {
            AssertCheck::Holds(cond) => {
                let c = self.expr(cond);
                quote! {
                    if !(#c) {
                        #ctx.fail_assert(#n, #line);
                        #stop
                    }
                }
            }
            AssertCheck::Compare { op, left, right } => {
                let (l, r) = (Ident::new("left", Span::mixed_site()), Ident::new("right", Span::mixed_site()));
                let t = scalar_type(left.ty);
                let (lv, rv) = (self.expr(left), self.expr(right));
                let holds = if *op == BinOp::Eq { quote!(#l == #r) } else { quote!(#l != #r) };
                quote! {{
                    let #l: #t = #lv;
                    let #r: #t = #rv;
                    if !(#holds) {
                        #ctx.fail_assert_eq(#n, #line, #l, #r);
                        #stop
                    }
                }}
            }
        };
        if a.debug_only {
            quote!(if #ctx.debug_checks() { #checked })
        } else {
            checked
        }
    }

    /// `array[index] = value` or `array[index] op= value`.
    fn store(&self, array: ArrayId, index: &Expr, line: u32, op: Option<BinOp>, value: &Expr) -> TokenStream {
        let (slice, ctx) = (self.slice(array), ctx_ident());
        let id_num = array.0 as u32;
        let (index, v) = (self.expr(index), self.expr(value));
        let stored = match op {
            None => quote!(value),
            Some(op) => {
                let current = quote!(#slice.load(index, #ctx, #id_num, #line));
                RustExpr { k: self.k, ctx: self }.binary(op, self.k.array(array).elem, current, quote!(value))
            }
        };
        // Rust evaluates the assigned value before the place.
        quote! {{
            let value = #v;
            let index = (#index) as u64;
            #slice.store(index, #stored, #ctx, #id_num, #line);
        }}
    }
}

/// A thread's statements: the shared ones, and its stores, thread-local
/// arrays, barriers and `return`.
impl RustStmts for Emu<'_> {
    type Stmt = Stmt;

    fn kernel(&self) -> &Kernel {
        self.k
    }

    fn view<'s>(&self, s: &'s Stmt) -> View<'s, Stmt> {
        match &s.kind {
            StmtKind::Let { var, init } => View::Let { var: *var, init: init.as_ref() },
            StmtKind::Assign { place: Place::Var(var), op, value } => View::Assign { var: *var, op: *op, value },
            StmtKind::If { cond, then, otherwise } => View::If { cond, then, otherwise: otherwise.as_deref() },
            StmtKind::While { cond, body, .. } => View::While { cond, body },
            StmtKind::Loop { body, .. } => View::Loop { body },
            StmtKind::For { var, range, body, .. } => View::For { var: *var, range, body },
            StmtKind::Break(_) => View::Break,
            StmtKind::Continue(_) => View::Continue,
            StmtKind::Block(b) => View::Block(b),
            StmtKind::Inline { call, body } => View::Inline { call: *call, body },
            StmtKind::Leave(call) => View::Leave(*call),
            StmtKind::LetArray { .. }
            | StmtKind::Assign { .. }
            | StmtKind::Expr(_)
            | StmtKind::Return
            | StmtKind::GridSync { .. }
            | StmtKind::SyncBlock
            | StmtKind::Assert { .. }
            | StmtKind::WaitUntil { .. }
            | StmtKind::Locked { .. }
            | StmtKind::Swap(..)
            | StmtKind::StoreChunk { .. }
            | StmtKind::CopyChunkAsync { .. }
            | StmtKind::WaitAsyncCopies
            | StmtKind::PutRange(_) => View::Own,
        }
    }

    fn own(&self, s: &Stmt) -> TokenStream {
        let ctx = ctx_ident();
        match &s.kind {
            StmtKind::LetArray { array, init } => self.let_array(*array, init),
            StmtKind::Assign { place: Place::Elem { array, index, line }, op, value } => {
                self.store(*array, index, *line, *op, value)
            }
            StmtKind::Expr(e) => {
                let e = self.expr(e);
                quote!(let _ = #e;)
            }
            StmtKind::Return => quote!(return;),
            StmtKind::GridSync { scope, .. } => {
                let sync = match scope {
                    SyncScope::Team => quote!(#ctx.grid_sync().await;),
                    SyncScope::Gpu => quote!(#ctx.gpu_sync().await;),
                };
                if self.asserts.stop_at_grid_sync() {
                    quote! {
                        #sync
                        if #ctx.assert_failed() { return; }
                    }
                } else {
                    sync
                }
            }
            StmtKind::Assert { check, assertion } => self.assertion(check, assertion),
            StmtKind::SyncBlock => quote!(#ctx.sync_block().await;),
            StmtKind::WaitUntil { before, cond, line } => self.wait_until(before, cond, *line),
            StmtKind::Locked { array, index, body, line } => self.locked(*array, index, body, *line),
            StmtKind::Swap(a, b) => {
                let (a, b) = (array_ident(self.k, *a), array_ident(self.k, *b));
                quote!(::core::mem::swap(&mut #a, &mut #b);)
            }
            StmtKind::StoreChunk { chunk, from, .. } => {
                let (target, target_num) = (self.slice(chunk.array), chunk.array.0 as u32);
                let (from, from_num) = (self.slice(*from), from.0 as u32);
                let (index, n, line) = (var_ident(self.k, chunk.index), chunk.len, chunk.line);
                quote! {
                    if let Some(start) = #target.chunk_start(#index as u64, #n, #ctx, #target_num, #line) {
                        for j in 0..#n {
                            #target.store(start + j, #from.load(j, #ctx, #from_num, 0), #ctx, #target_num, #line);
                        }
                    }
                }
            }
            StmtKind::CopyChunkAsync { chunk, source, .. } => {
                let (target, target_num) = (self.slice(chunk.array), chunk.array.0 as u32);
                let (source_slice, source_num) = (self.slice(source.array), source.array.0 as u32);
                let (index, n, line) = (var_ident(self.k, chunk.index), chunk.len, chunk.line);
                let source_index = var_ident(self.k, source.index);
                let copies = async_copies_ident();
                quote! {
                    if let Some(start) = #target.chunk_start(#index as u64, #n, #ctx, #target_num, #line) {
                        if let Some(source_start) = #source_slice.chunk_start(#source_index as u64, #n, #ctx, #source_num, #line) {
                            #copies.issue(&#target, start, &#source_slice, source_start, #n, #source_num, #line);
                        }
                    }
                }
            }
            StmtKind::WaitAsyncCopies => {
                let copies = async_copies_ident();
                let changed = Ident::new("changed", Span::mixed_site());
                quote! {
                    if let Some(#changed) = #copies.wait() {
                        #ctx.async_source_written(#changed.array, #changed.index, #changed.line);
                    }
                }
            }
            StmtKind::PutRange(put) => self.put_range(put),
            _ => quote!(compile_error!("gsync: a shared statement as the emulator's own");),
        }
    }

    /// First ends the thread if the launch's watchdog stopped it, so that an
    /// endless loop cannot hang the emulator.
    fn loop_body(&self, body: TokenStream) -> TokenStream {
        let ctx = ctx_ident();
        quote! {
            if #ctx.stopped() { return; }
            #body
        }
    }

    fn strided_for(&self, var: VarId, range: &ForRange, body: TokenStream) -> TokenStream {
        let ctx = ctx_ident();
        let id = var_ident(self.k, var);
        let ty = self.k.var(var).ty;
        let t = scalar_type(ty);
        let (first, stride) = match range {
            ForRange::GridStride { .. } => (quote!(#ctx.global_id()), quote!(#ctx.grid_size())),
            _ => (quote!(#ctx.thread_idx()), quote!(#ctx.block_dim())),
        };
        let (ForRange::Seq { start, end, .. }
        | ForRange::GridStride { start, end }
        | ForRange::BlockStride { start, end }) = range;
        // A wide counter, as on the device: `+ stride` never wraps past `end`.
        let wide = if ty.is_signed_int() { format_ident!("i64") } else { format_ident!("u64") };
        let (s, e) = (self.expr(start), self.expr(end));
        quote! {
            for wide in ((#s as #wide + #first as #wide)..(#e as #wide)).step_by(#stride as usize) {
                let #id = wide as #t;
                #body
            }
        }
    }
}

impl RustContext for Emu<'_> {
    fn load(&self, array: ArrayId, index: TokenStream, line: u32) -> TokenStream {
        let (slice, ctx, id) = (self.slice(array), ctx_ident(), array.0 as u32);
        quote!(#slice.load((#index) as u64, #ctx, #id, #line))
    }

    fn len(&self, array: ArrayId) -> TokenStream {
        let slice = self.slice(array);
        quote!(#slice.len())
    }

    fn builtin(&self, b: Builtin) -> TokenStream {
        let ctx = ctx_ident();
        match b {
            Builtin::ThreadIdx => quote!(#ctx.thread_idx()),
            Builtin::BlockIdx => quote!(#ctx.block_idx()),
            Builtin::BlockDim => quote!(#ctx.block_dim()),
            Builtin::GridDim => quote!(#ctx.grid_dim()),
            Builtin::GlobalId => quote!(#ctx.global_id()),
            Builtin::GridSize => quote!(#ctx.grid_size()),
            Builtin::LaneId => quote!(#ctx.lane_id()),
            Builtin::WarpSize => quote!(32u32),
            Builtin::WarpId => quote!(#ctx.warp_id()),
            Builtin::ThreadIdxAxis(a) => axis_of(quote!(#ctx.thread_idx_xyz()), a),
            Builtin::BlockIdxAxis(a) => axis_of(quote!(#ctx.block_idx_xyz()), a),
            Builtin::BlockDimAxis(a) => axis_of(quote!(#ctx.block_dim_xyz()), a),
            Builtin::GridDimAxis(a) => axis_of(quote!(#ctx.grid_dim_xyz()), a),
            Builtin::BlockSize => quote!((#ctx.block_dim() as usize)),
            Builtin::Pe => quote!(#ctx.pe()),
            Builtin::NPes => quote!(#ctx.n_pes()),
        }
    }

    fn atomic(
        &self,
        op: AtomicOp,
        order: MemoryOrder,
        array: ArrayId,
        index: TokenStream,
        args: Vec<TokenStream>,
        line: u32,
    ) -> TokenStream {
        let (slice, ctx, id) = (self.slice(array), ctx_ident(), array.0 as u32);
        let method = format_ident!(
            "{}",
            match op {
                AtomicOp::Add => "atomic_add",
                AtomicOp::Min => "atomic_min",
                AtomicOp::Max => "atomic_max",
                AtomicOp::Exch => "atomic_exch",
                AtomicOp::Cas => "atomic_cas",
                AtomicOp::Load if order == MemoryOrder::Relaxed => "load_relaxed",
                AtomicOp::Load => "load_acquire",
                AtomicOp::Store if order == MemoryOrder::Relaxed => "store_relaxed",
                AtomicOp::Store => "store_release",
                AtomicOp::Get => "get",
                AtomicOp::Put => "put",
                AtomicOp::Signal => "signal",
                AtomicOp::LoadSignal => "load_acquire",
            }
        );
        let call = match op {
            AtomicOp::Get | AtomicOp::Put | AtomicOp::Signal => {
                let (pe, rest) = args.split_first().expect("a PE argument");
                quote!(#slice.#method((#pe) as u64, (#index) as u64, #(#rest,)* #ctx, #id, #line))
            }
            AtomicOp::Load | AtomicOp::Store | AtomicOp::LoadSignal => {
                quote!(#slice.#method((#index) as u64, #(#args,)* #ctx, #id, #line))
            }
            _ => {
                let order = format_ident!("{}", order.name());
                quote!(#slice.#method((#index) as u64, #(#args,)* ::core::sync::atomic::Ordering::#order, #ctx, #id, #line))
            }
        };
        if order == MemoryOrder::Relaxed {
            return call;
        }
        // An ordered access is where threads communicate: the emulator lets the block's other
        // threads run here, so that they see each other's intermediate states as on a GPU.
        quote!({
            let value = #call;
            #ctx.yield_now().await;
            value
        })
    }

    fn shuffle(&self, op: ShuffleOp, value: TokenStream, lane: TokenStream) -> TokenStream {
        let private = crate::paths::private();
        let ctx = ctx_ident();
        let op = format_ident!(
            "{}",
            match op {
                ShuffleOp::Up => "Up",
                ShuffleOp::Down => "Down",
                ShuffleOp::Xor => "Xor",
                ShuffleOp::Idx => "Idx",
            }
        );
        quote!(#ctx.shuffle(#private::Shuffle::#op, #value, #lane).await)
    }

    fn vote(&self, op: VoteOp, value: TokenStream) -> TokenStream {
        let ctx = ctx_ident();
        let op = format_ident!("{}", op.name());
        quote!(#ctx.#op(#value).await)
    }

    fn zero_step(&self, line: u32) -> TokenStream {
        let ctx = ctx_ident();
        quote!(#ctx.zero_step(#line))
    }
}

/// The `a` component of the `(x, y, z)` tuple `xyz`.
fn axis_of(xyz: TokenStream, a: Axis) -> TokenStream {
    let position = syn::Index::from(a.position());
    quote!(#xyz.#position)
}
