//! The CPU-emulator backend: the kernel as one async Rust function per
//! thread, run by the runtime's scheduler. `sync_block()`, `grid_sync()` and
//! warp shuffles are await points; every array is an `EmuSlice` (relaxed
//! atomics, so that threads share memory soundly), bounds-checked always.

use crate::emit::driver::{array_ident, gpu_ident, var_ident};
use crate::emit::rust_expr::{scalar_type, RustContext, RustExpr};
use crate::ir::*;
use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote};

/// The body of `emulate(gpu, launch, params…)`.
///
/// Each block gets a `Memory` value: views of the kernel's slices and its own
/// shared arrays. Thread futures borrow memory only through it, so that their
/// lifetime follows the scheduler's borrow of the block's `Memory`.
pub fn body(k: &Kernel) -> TokenStream {
    let gpu = gpu_ident();
    let launch = Ident::new("launch", Span::mixed_site());
    let (ctx, memory) = (ctx_ident(), memory_ident());
    let mut views = Vec::new();
    let mut fields = Vec::new();
    let mut inits = Vec::new();
    for (i, a) in k.arrays.iter().enumerate() {
        let id = array_ident(k, ArrayId(i));
        let t = scalar_type(a.elem);
        match a.space {
            ArraySpace::Global => {
                views.push(quote!(let #id: &::gsync::EmuSlice<#t> = #id.emu()?;));
                fields.push(quote!(#id: &'g ::gsync::EmuSlice<#t>));
                inits.push(quote!(#id));
            }
            ArraySpace::Shared => {
                let len = a.len.unwrap_or(1) as usize;
                fields.push(quote!(#id: ::gsync::EmuSlice<#t>));
                inits.push(quote!(#id: ::gsync::EmuSlice::zeroed(#len)));
            }
            ArraySpace::Local => {}
        }
    }
    let rebinds = k.params.iter().filter_map(|p| match p {
        Param::Scalar(v) if k.var(*v).mutable => {
            let id = var_ident(k, *v);
            Some(quote!(let mut #id = #id;))
        }
        _ => None,
    });
    let e = Emu { k };
    let stmts = e.block(&k.body);
    quote! {
        #(#views)*
        struct Memory<'g> { #(#fields,)* _kernel: ::core::marker::PhantomData<&'g ()> }
        #gpu.emulate(
            &KERNEL,
            #launch,
            || Memory { #(#inits,)* _kernel: ::core::marker::PhantomData },
            |#ctx: &::gsync::ThreadCtx<'_>, #memory: &Memory<'_>| {
                ::std::boxed::Box::pin(async move {
                    #(#rebinds)*
                    #stmts
                })
            },
        )
    }
}

fn ctx_ident() -> Ident {
    Ident::new("ctx", Span::mixed_site())
}

fn memory_ident() -> Ident {
    Ident::new("memory", Span::mixed_site())
}

struct Emu<'k> {
    k: &'k Kernel,
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
            _ => {
                let memory = memory_ident();
                quote!(#memory.#id)
            }
        }
    }

    fn block(&self, stmts: &[Stmt]) -> TokenStream {
        let stmts = stmts.iter().map(|s| self.stmt(s));
        quote!(#(#stmts)*)
    }

    fn stmt(&self, s: &Stmt) -> TokenStream {
        crate::stack::deep(|| self.stmt_inner(s))
    }

    fn stmt_inner(&self, s: &Stmt) -> TokenStream {
        let k = self.k;
        let ctx = ctx_ident();
        match &s.kind {
            StmtKind::Let { var, init } => {
                let id = var_ident(k, *var);
                let ty = scalar_type(k.ty(k.var(*var).ty));
                let mutability = if k.var(*var).mutable || init.is_none() { quote!(mut) } else { quote!() };
                match init {
                    Some(e) => {
                        let e = self.expr(e);
                        quote!(let #mutability #id: #ty = #e;)
                    }
                    None => quote!(let #mutability #id: #ty;),
                }
            }
            StmtKind::LetArray { array, init } => {
                let info = k.array(*array);
                let id = array_ident(k, *array);
                let (t, len) = (scalar_type(info.elem), info.len.unwrap_or(1) as usize);
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
                };
                quote! {
                    let #id: ::gsync::EmuSlice<#t> = ::gsync::EmuSlice::zeroed(#len);
                    #fill
                }
            }
            StmtKind::Assign { place, op, value } => self.assign(place, *op, value),
            StmtKind::Expr(e) => {
                let e = self.expr(e);
                quote!(let _ = #e;)
            }
            StmtKind::If { cond, then, otherwise } => {
                let (c, t) = (self.expr(cond), self.block(then));
                match otherwise {
                    Some(o) => {
                        let o = self.block(o);
                        quote!(if #c { #t } else { #o })
                    }
                    None => quote!(if #c { #t }),
                }
            }
            StmtKind::While { cond, body, .. } => {
                let (c, b) = (self.expr(cond), self.block(body));
                quote!(while #c { #b })
            }
            StmtKind::Loop { body, .. } => {
                let b = self.block(body);
                quote!(loop { #b })
            }
            StmtKind::For { var, range, body, .. } => self.for_loop(*var, range, body),
            StmtKind::Break(_) => quote!(break;),
            StmtKind::Continue(_) => quote!(continue;),
            StmtKind::Return => quote!(return;),
            StmtKind::GridSync { .. } => quote!(#ctx.grid_sync().await;),
            StmtKind::SyncBlock => quote!(#ctx.sync_block().await;),
            StmtKind::Block(b) => {
                let b = self.block(b);
                quote!({ #b })
            }
        }
    }

    fn assign(&self, place: &Place, op: Option<BinOp>, value: &Expr) -> TokenStream {
        let k = self.k;
        let ctx = ctx_ident();
        let rust = RustExpr { k, ctx: self };
        match place {
            Place::Var(v) => {
                let id = var_ident(k, *v);
                let value = match op {
                    None => self.expr(value),
                    Some(op) => rust.binary(op, k.ty(k.var(*v).ty), quote!(#id), self.expr(value)),
                };
                quote!(#id = #value;)
            }
            Place::Elem { array, index, line } => {
                let slice = self.slice(*array);
                let id_num = array.0 as u32;
                let (index, v) = (self.expr(index), self.expr(value));
                let stored = match op {
                    None => quote!(value),
                    Some(op) => {
                        let current = quote!(#slice.load(index, #ctx, #id_num, #line));
                        rust.binary(op, k.array(*array).elem, current, quote!(value))
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
    }

    fn for_loop(&self, var: VarId, range: &ForRange, body: &Block) -> TokenStream {
        let k = self.k;
        let ctx = ctx_ident();
        let id = var_ident(k, var);
        let ty = k.ty(k.var(var).ty);
        let t = scalar_type(ty);
        let b = self.block(body);
        match range {
            ForRange::Seq { start, end, inclusive, step, reverse } => {
                let iter = RustExpr { k: self.k, ctx: self }.seq_iter(start, end, *inclusive, step.as_ref(), *reverse);
                quote!(for #id in #iter { #b })
            }
            ForRange::GridStride { start, end } | ForRange::BlockStride { start, end } => {
                let (first, stride) = match range {
                    ForRange::GridStride { .. } => (quote!(#ctx.global_id()), quote!(#ctx.grid_size())),
                    _ => (quote!(#ctx.thread_idx()), quote!(#ctx.block_dim())),
                };
                // A wide counter, as on the device: `+ stride` never wraps past `end`.
                let wide = if ty.is_signed_int() { format_ident!("i64") } else { format_ident!("u64") };
                let (s, e) = (self.expr(start), self.expr(end));
                quote! {
                    for wide in ((#s as #wide + #first as #wide)..(#e as #wide)).step_by(#stride as usize) {
                        let #id = wide as #t;
                        #b
                    }
                }
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
        }
    }

    fn atomic(
        &self,
        op: AtomicOp,
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
            }
        );
        quote!(#slice.#method((#index) as u64, #(#args,)* #ctx, #id, #line))
    }

    fn shuffle(&self, op: ShuffleOp, value: TokenStream, lane: TokenStream) -> TokenStream {
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
        quote!(#ctx.shuffle(::gsync::Shuffle::#op, #value, #lane).await)
    }

    fn zero_step(&self, line: u32) -> TokenStream {
        let ctx = ctx_ident();
        quote!(#ctx.zero_step(#line))
    }
}
