//! The host code of a split kernel (the `MultiLaunch` barrier): Rust code
//! that runs the grid-uniform control flow and launches one segment kernel
//! per stretch between barriers. Expressions keep the DSL's meaning on the
//! host: wrapping integer arithmetic, division by zero giving 0, masked
//! shifts, saturating casts.

use crate::check::Facts;
use crate::emit::block_size::BlockConstCode;
use crate::emit::rust_expr::RustContext;
use crate::emit::rust_names::{array_ident, run_ident, var_ident};
use crate::emit::rust_stmt::{self, RustStmts, View};
use crate::ir::*;
use crate::split::{HostStmt, SplitPlan};
use proc_macro2::{Ident, Span, TokenStream};
use quote::{quote, ToTokens};

/// The body of `split(run, params…)`, which the runtime calls between beginning and
/// finishing the split run `run`.
pub fn body(k: &Kernel, facts: &Facts, plan: Option<&SplitPlan>) -> TokenStream {
    let run = run_ident();
    let Some(plan) = plan else {
        // Cannot be split: `Gpu::begin_split` refuses the kernel, saying why, before this runs.
        return quote!(::core::result::Result::Ok(()));
    };
    let host = SplitHost { k, plan };
    let swapped = &facts.swapped;
    let rebinds = k.params.iter().filter_map(|p| match p {
        Param::Scalar(v) if k.var(*v).mutable => {
            let id = var_ident(k, *v);
            Some(quote!(let mut #id = #id;))
        }
        Param::Slice(a) if swapped.contains(a) => {
            let id = array_ident(k, *a);
            Some(quote!(let mut #id = #id;))
        }
        _ => None,
    });
    let stmts = rust_stmt::block(&host, &plan.host);
    let (block_dim, grid_dim) = (shape_ident("block_dim"), shape_ident("grid_dim"));
    quote! {
        let #block_dim: u32 = #run.threads();
        let #grid_dim: u32 = #run.blocks();
        #(#rebinds)*
        #stmts
        ::core::result::Result::Ok(())
    }
}

fn shape_ident(name: &str) -> Ident {
    Ident::new(name, Span::mixed_site())
}

struct SplitHost<'k> {
    k: &'k Kernel,
    plan: &'k SplitPlan,
}

/// The host code's statements: the shared ones, and the launches.
impl RustStmts for SplitHost<'_> {
    type Stmt = HostStmt;

    fn kernel(&self) -> &Kernel {
        self.k
    }

    fn view<'s>(&self, s: &'s HostStmt) -> View<'s, HostStmt> {
        match s {
            HostStmt::Let { var, init } => View::Let { var: *var, init: init.as_ref() },
            HostStmt::Assign { var, op, value } => View::Assign { var: *var, op: *op, value },
            HostStmt::If { cond, then, otherwise } => View::If { cond, then, otherwise: otherwise.as_deref() },
            HostStmt::While { cond, body } => View::While { cond, body },
            HostStmt::Loop { body } => View::Loop { body },
            HostStmt::For { var, range, body } => View::For { var: *var, range, body },
            HostStmt::Break => View::Break,
            HostStmt::Continue => View::Continue,
            HostStmt::Block(b) => View::Block(b),
            HostStmt::Inline { call, body } => View::Inline { call: *call, body },
            HostStmt::Leave(call) => View::Leave(*call),
            HostStmt::Launch(_) | HostStmt::GridSync | HostStmt::Swap(..) => View::Own,
        }
    }

    fn own(&self, s: &HostStmt) -> TokenStream {
        match s {
            HostStmt::Launch(i) => self.launch(*i),
            HostStmt::GridSync => {
                let run = run_ident();
                quote!(#run.grid_sync()?;)
            }
            HostStmt::Swap(a, b) => {
                let (a, b) = (array_ident(self.k, *a), array_ident(self.k, *b));
                quote!(::core::mem::swap(&mut #a, &mut #b);)
            }
            _ => quote!(compile_error!("gsync: a launch is the host code's only statement of its own");),
        }
    }

    fn strided_for(&self, _: VarId, _: &ForRange, _: TokenStream) -> TokenStream {
        quote!(compile_error!("gsync: a strided loop cannot be host control flow");)
    }
}

impl SplitHost<'_> {
    fn launch(&self, index: usize) -> TokenStream {
        let private = crate::paths::private();
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
                    if k.array(*a).symmetric {
                        let name = &k.array(*a).name;
                        pushes.push(quote!(#args.symmetric(#name);));
                    }
                }
                Param::Scalar(v) => {
                    let id = var_ident(k, *v);
                    pushes.push(quote!(#args.scalar(#id);));
                }
            }
        }
        for v in &self.plan.segments[index].host_values {
            let id = var_ident(k, *v);
            pushes.push(quote!(#args.scalar(#id);));
        }
        quote! {
            {
                let mut #args = #private::KernelArgs::new();
                #(#pushes)*
                // SAFETY: the arguments follow the C parameter list #[grid_phases]
                // generated for this segment: the kernel's parameters, then its host values.
                unsafe { #run.launch(#index, #args)?; }
            }
        }
    }
}

/// Host values of the host code: reads fetch from the device, the launch shape is the run's.
impl RustContext for SplitHost<'_> {
    fn load(&self, array: ArrayId, index: TokenStream, line: u32) -> TokenStream {
        let run = run_ident();
        let id = array_ident(self.k, array);
        let name = &self.k.array(array).name;
        quote!(#run.read(&*#id, #index as u64, #name, #line)?)
    }

    fn len(&self, array: ArrayId) -> TokenStream {
        if let Some(tree) = &self.k.array(array).block_len {
            let len = tree.rust(&shape_ident("block_dim").into_token_stream());
            return quote!((#len as usize));
        }
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
            Builtin::BlockSize => quote!((#block_dim as usize)),
            Builtin::WarpSize => quote!(32u32),
            // The host code of a PE of a team runs for that PE: pe() is its own.
            Builtin::Pe => {
                let run = run_ident();
                quote!(#run.pe())
            }
            Builtin::NPes => {
                let run = run_ident();
                quote!(#run.n_pes())
            }
            Builtin::BlockDimAxis(a) => {
                let (run, axis) = (run_ident(), Ident::new(a.name(), Span::call_site()));
                quote!(#run.block_shape().#axis)
            }
            Builtin::GridDimAxis(a) => {
                let (run, axis) = (run_ident(), Ident::new(a.name(), Span::call_site()));
                quote!(#run.grid_shape().#axis)
            }
            // Never host-evaluable: the split rejects them first.
            _ => quote!(compile_error!("gsync: a thread builtin in host code")),
        }
    }

    fn atomic(
        &self,
        _: AtomicOp,
        _: MemoryOrder,
        _: ArrayId,
        _: TokenStream,
        _: Vec<TokenStream>,
        _: u32,
    ) -> TokenStream {
        quote!(compile_error!("gsync: an atomic in host code"))
    }

    fn shuffle(&self, _: ShuffleOp, _: TokenStream, _: TokenStream) -> TokenStream {
        quote!(compile_error!("gsync: a shuffle in host code"))
    }

    fn vote(&self, _: VoteOp, _: TokenStream) -> TokenStream {
        quote!(compile_error!("gsync: a warp vote in host code"))
    }

    fn zero_step(&self, line: u32) -> TokenStream {
        let run = run_ident();
        quote!(#run.zero_step(#line)?)
    }
}
