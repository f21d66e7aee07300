//! The host driver of a split kernel (the `MultiLaunch` barrier): Rust code
//! that runs the grid-uniform control flow and launches one segment kernel
//! per stretch between barriers. Expressions keep the DSL's meaning on the
//! host: wrapping integer arithmetic, division by zero giving 0, masked
//! shifts, saturating casts.

use crate::emit::rust_expr::{scalar_type, RustContext, RustExpr};
use crate::emit::rust_names::{array_ident, gpu_ident, var_ident};
use crate::ir::*;
use crate::split::{HostStmt, SplitPlan};
use proc_macro2::{Ident, Span, TokenStream};
use quote::quote;

/// The body of `multi_launch(gpu, launch, params…)`.
pub fn body(k: &Kernel, plan: Option<&SplitPlan>) -> TokenStream {
    let gpu = gpu_ident();
    let launch = Ident::new("launch", Span::mixed_site());
    let run = run_ident();
    let spec = crate::emit::host::kernel_spec();
    let Some(plan) = plan else {
        // Cannot be split: `begin_segments` reports why.
        return quote!(#gpu.begin_segments(&#spec, #launch)?.finish());
    };
    let d = Driver { k };
    let rebinds = k.params.iter().filter_map(|p| match p {
        Param::Scalar(v) if k.var(*v).mutable => {
            let id = var_ident(k, *v);
            Some(quote!(let mut #id = #id;))
        }
        _ => None,
    });
    let stmts = d.block(&plan.host, plan);
    let (block_dim, grid_dim) = (shape_ident("block_dim"), shape_ident("grid_dim"));
    quote! {
        let mut #run = #gpu.begin_segments(&#spec, #launch)?;
        let #block_dim: u32 = #run.threads();
        let #grid_dim: u32 = #run.blocks();
        #(#rebinds)*
        #stmts
        #run.finish()
    }
}

fn run_ident() -> Ident {
    Ident::new("run", Span::mixed_site())
}

fn shape_ident(name: &str) -> Ident {
    Ident::new(name, Span::mixed_site())
}

struct Driver<'k> {
    k: &'k Kernel,
}

impl Driver<'_> {
    fn block(&self, stmts: &[HostStmt], plan: &SplitPlan) -> TokenStream {
        let stmts = stmts.iter().map(|s| self.stmt(s, plan));
        quote!(#(#stmts)*)
    }

    fn stmt(&self, s: &HostStmt, plan: &SplitPlan) -> TokenStream {
        crate::stack::deep(|| self.stmt_inner(s, plan))
    }

    fn stmt_inner(&self, s: &HostStmt, plan: &SplitPlan) -> TokenStream {
        let k = self.k;
        match s {
            HostStmt::Let { var, init } => {
                let id = var_ident(k, *var);
                let ty = scalar_type(k.var(*var).ty);
                let mutability = if k.var(*var).mutable || init.is_none() { quote!(mut) } else { quote!() };
                match init {
                    Some(e) => {
                        let e = self.expr(e);
                        quote!(let #mutability #id: #ty = #e;)
                    }
                    None => quote!(let #mutability #id: #ty;),
                }
            }
            HostStmt::Assign { var, op, value } => {
                let id = var_ident(k, *var);
                let ty = k.var(*var).ty;
                let value = match op {
                    None => self.expr(value),
                    Some(op) => {
                        let rhs = self.expr(value);
                        self.binary(*op, ty, quote!(#id), rhs)
                    }
                };
                quote!(#id = #value;)
            }
            HostStmt::If { cond, then, otherwise } => {
                let (c, t) = (self.expr(cond), self.block(then, plan));
                match otherwise {
                    Some(o) => {
                        let o = self.block(o, plan);
                        quote!(if #c { #t } else { #o })
                    }
                    None => quote!(if #c { #t }),
                }
            }
            HostStmt::While { cond, body } => {
                let (c, b) = (self.expr(cond), self.block(body, plan));
                quote!(while #c { #b })
            }
            HostStmt::Loop { body } => {
                let b = self.block(body, plan);
                quote!(loop { #b })
            }
            HostStmt::For { var, range, body } => {
                let id = var_ident(k, *var);
                let b = self.block(body, plan);
                let ForRange::Seq { start, end, inclusive, step, reverse } = range else {
                    return quote!(compile_error!("gsync: a strided loop cannot be host control flow"););
                };
                let iter = RustExpr { k: self.k, ctx: self }.seq_iter(start, end, *inclusive, step.as_ref(), *reverse);
                quote!(for #id in #iter { #b })
            }
            HostStmt::Break => quote!(break;),
            HostStmt::Continue => quote!(continue;),
            HostStmt::Block(b) => {
                let b = self.block(b, plan);
                quote!({ #b })
            }
            HostStmt::Launch(i) => self.launch(*i, plan),
        }
    }

    fn launch(&self, index: usize, plan: &SplitPlan) -> TokenStream {
        let k = self.k;
        let run = run_ident();
        let args = Ident::new("args", Span::mixed_site());
        let mut pushes = Vec::new();
        for p in &k.params {
            match p {
                Param::Slice(a) => {
                    let id = array_ident(k, *a);
                    pushes.push(if k.array(*a).mutable {
                        quote!(#args.slice_mut(&mut *#id);)
                    } else {
                        quote!(#args.slice(&*#id);)
                    });
                }
                Param::Scalar(v) => {
                    let id = var_ident(k, *v);
                    pushes.push(quote!(#args.scalar(#id);));
                }
            }
        }
        for v in &plan.segments[index].host_values {
            let id = var_ident(k, *v);
            pushes.push(quote!(#args.scalar(#id);));
        }
        quote! {
            {
                let mut #args = ::gsync::KernelArgs::new();
                #(#pushes)*
                // SAFETY: the arguments follow the C parameter list #[grid_phases]
                // generated for this segment: the kernel's parameters, then its host values.
                unsafe { #run.launch(#index, #args)?; }
            }
        }
    }

    fn expr(&self, e: &Expr) -> TokenStream {
        RustExpr { k: self.k, ctx: self }.expr(e)
    }

    fn binary(&self, op: BinOp, ty: Scalar, l: TokenStream, r: TokenStream) -> TokenStream {
        RustExpr { k: self.k, ctx: self }.binary(op, ty, l, r)
    }
}

/// Host values of the driver: reads fetch from the device, the launch shape is the run's.
impl RustContext for Driver<'_> {
    fn load(&self, array: ArrayId, index: TokenStream, line: u32) -> TokenStream {
        let run = run_ident();
        let id = array_ident(self.k, array);
        let name = &self.k.array(array).name;
        quote!(#run.read(&*#id, #index as u64, #name, #line)?)
    }

    fn len(&self, array: ArrayId) -> TokenStream {
        match self.k.array(array).len {
            Some(n) => {
                let n = n as usize;
                quote!(#n)
            }
            None => {
                let id = array_ident(self.k, array);
                quote!(#id.len())
            }
        }
    }

    fn builtin(&self, b: Builtin) -> TokenStream {
        let (block_dim, grid_dim) = (shape_ident("block_dim"), shape_ident("grid_dim"));
        match b {
            Builtin::BlockDim => quote!(#block_dim),
            Builtin::GridDim => quote!(#grid_dim),
            Builtin::GridSize => quote!(#block_dim.wrapping_mul(#grid_dim)),
            Builtin::WarpSize => quote!(32u32),
            // Never host-evaluable: the split rejects them first.
            _ => quote!(compile_error!("gsync: a thread builtin in host code")),
        }
    }

    fn atomic(&self, _: AtomicOp, _: ArrayId, _: TokenStream, _: Vec<TokenStream>, _: u32) -> TokenStream {
        quote!(compile_error!("gsync: an atomic in host code"))
    }

    fn shuffle(&self, _: ShuffleOp, _: TokenStream, _: TokenStream) -> TokenStream {
        quote!(compile_error!("gsync: a shuffle in host code"))
    }

    fn zero_step(&self, line: u32) -> TokenStream {
        let run = run_ident();
        quote!(#run.zero_step(#line)?)
    }
}
