//! The host driver of a split kernel (the `MultiLaunch` barrier): Rust code
//! that runs the grid-uniform control flow and launches one segment kernel
//! per stretch between barriers. Expressions keep the DSL's meaning on the
//! host: wrapping integer arithmetic, division by zero giving 0, masked
//! shifts, saturating casts.

use crate::ir::*;
use crate::split::{HostStmt, SplitPlan};
use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote};

/// The body of `multi_launch(gpu, launch, params…)`.
pub fn body(k: &Kernel, plan: Option<&SplitPlan>) -> TokenStream {
    let gpu = gpu_ident();
    let launch = Ident::new("launch", Span::mixed_site());
    let run = run_ident();
    let Some(plan) = plan else {
        // Cannot be split: `begin_segments` reports why.
        return quote!(#gpu.begin_segments(&KERNEL, #launch)?.finish());
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
        let mut #run = #gpu.begin_segments(&KERNEL, #launch)?;
        let #block_dim: u32 = #run.threads();
        let #grid_dim: u32 = #run.blocks();
        #(#rebinds)*
        #stmts
        #run.finish()
    }
}

/// The driver's parameter name for a kernel variable (prefixed, so that no
/// Rust keyword or generated name can collide with it).
pub fn var_ident(k: &Kernel, v: VarId) -> Ident {
    format_ident!("v_{}", k.var(v).c_name)
}

/// The driver's parameter name for a slice.
pub fn array_ident(k: &Kernel, a: ArrayId) -> Ident {
    format_ident!("v_{}", k.array(a).c_name)
}

pub fn gpu_ident() -> Ident {
    Ident::new("gpu", Span::mixed_site())
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
        let k = self.k;
        match s {
            HostStmt::Let { var, init } => {
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
            HostStmt::Assign { var, op, value } => {
                let id = var_ident(k, *var);
                let ty = k.ty(k.var(*var).ty);
                let value = match op {
                    None => self.expr(value),
                    Some(op) => {
                        let rhs = self.expr(value);
                        self.binary(*op, ty, k.ty(value.ty), quote!(#id), rhs)
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
                let (s, e) = (self.expr(start), self.expr(end));
                let range = if *inclusive { quote!((#s..=#e)) } else { quote!((#s..#e)) };
                let iter = match (step, reverse) {
                    (Some(st), _) => {
                        let st = self.expr(st);
                        quote!(#range.step_by(#st))
                    }
                    (None, true) => quote!(#range.rev()),
                    (None, false) => range,
                };
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
        let k = self.k;
        let ty = k.ty(e.ty);
        match &e.kind {
            ExprKind::Int(v) => int_literal(*v, ty),
            ExprKind::Float(v) => float_literal(*v, ty),
            ExprKind::Bool(b) => quote!(#b),
            ExprKind::Var(v) => {
                let id = var_ident(k, *v);
                quote!(#id)
            }
            ExprKind::Unary(op, a) => {
                let a = self.expr(a);
                match op {
                    UnOp::Neg if ty.is_float() => quote!((-#a)),
                    UnOp::Neg => quote!(#a.wrapping_neg()),
                    UnOp::Not => quote!((!#a)),
                }
            }
            ExprKind::Binary(op, a, b) => {
                let operand = k.ty(a.ty);
                let (l, r) = (self.expr(a), self.expr(b));
                self.binary(*op, operand, k.ty(b.ty), l, r)
            }
            ExprKind::Cast(inner) => {
                let inner = self.expr(inner);
                let t = scalar_type(ty);
                quote!((#inner as #t))
            }
            ExprKind::Load { array, index, line } => {
                let run = run_ident();
                let id = array_ident(k, *array);
                let name = &k.array(*array).name;
                let index = self.expr(index);
                quote!(#run.read(&*#id, #index as u64, #name, #line)?)
            }
            ExprKind::Len(a) => match k.array(*a).len {
                Some(n) => {
                    let n = n as usize;
                    quote!(#n)
                }
                None => {
                    let id = array_ident(k, *a);
                    quote!(#id.len())
                }
            },
            ExprKind::Builtin(b) => {
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
            ExprKind::Call { rust, args, .. } => self.call(rust, args),
            ExprKind::Select { cond, then, otherwise } => {
                let (c, t, o) = (self.expr(cond), self.expr(then), self.expr(otherwise));
                quote!((if #c { #t } else { #o }))
            }
            ExprKind::Atomic { .. } | ExprKind::Shuffle { .. } => {
                quote!(compile_error!("gsync: an atomic or shuffle in host code"))
            }
        }
    }

    /// `l op r` with the DSL's meaning, operands of type `ty` (`rty` for a shift amount).
    fn binary(&self, op: BinOp, ty: Scalar, rty: Scalar, l: TokenStream, r: TokenStream) -> TokenStream {
        let ops = quote!(::gsync::__private::host_ops);
        if ty.is_int() {
            let _ = rty;
            match op {
                BinOp::Add => return quote!(#l.wrapping_add(#r)),
                BinOp::Sub => return quote!(#l.wrapping_sub(#r)),
                BinOp::Mul => return quote!(#l.wrapping_mul(#r)),
                BinOp::Div => return quote!(#ops::div(#l, #r)),
                BinOp::Rem => return quote!(#ops::rem(#l, #r)),
                BinOp::Shl => return quote!(#l.wrapping_shl(#r as u32)),
                BinOp::Shr => return quote!(#l.wrapping_shr(#r as u32)),
                _ => {}
            }
        }
        let sym: TokenStream = op.symbol().parse().unwrap_or_default();
        quote!((#l #sym #r))
    }

    fn call(&self, rust: &str, args: &[Expr]) -> TokenStream {
        let ops = quote!(::gsync::__private::host_ops);
        let receiver_int = args.first().is_some_and(|a| self.k.ty(a.ty).is_int());
        let lowered: Vec<TokenStream> = args.iter().map(|a| self.expr(a)).collect();
        if let Some(path) = rust.strip_suffix("::from_bits") {
            let ty = format_ident!("{path}");
            let a = &lowered[0];
            return quote!(#ty::from_bits(#a));
        }
        // Methods whose Rust version panics where the DSL defines a value.
        let helper = match rust {
            "clamp" | "div_ceil" | "next_power_of_two" | "ilog2" | "wrapping_div" | "wrapping_rem" => Some(rust),
            _ => None,
        };
        if let Some(h) = helper {
            let f = format_ident!("{h}");
            return quote!(#ops::#f(#(#lowered),*));
        }
        let name = match rust {
            "abs" if receiver_int => "wrapping_abs",
            "pow" => "wrapping_pow",
            other => other,
        };
        let method = format_ident!("{name}");
        let (receiver, rest) = lowered.split_first().map(|(r, rest)| (r.clone(), rest.to_vec())).unwrap_or_default();
        quote!(#receiver.#method(#(#rest),*))
    }
}

fn scalar_type(s: Scalar) -> Ident {
    format_ident!("{}", s.name())
}

fn int_literal(v: i128, ty: Scalar) -> TokenStream {
    let text = format!("{v}{}", ty.name());
    let lit: TokenStream = text.parse().unwrap_or_default();
    if v < 0 {
        quote!((#lit))
    } else {
        lit
    }
}

fn float_literal(v: f64, ty: Scalar) -> TokenStream {
    let t = scalar_type(ty);
    if v.is_nan() {
        return quote!(#t::NAN);
    }
    if v.is_infinite() {
        return if v > 0.0 { quote!(#t::INFINITY) } else { quote!(#t::NEG_INFINITY) };
    }
    let text = if ty == Scalar::F32 { format!("{:?}f32", v as f32) } else { format!("{v:?}f64") };
    let lit: TokenStream = text.parse().unwrap_or_default();
    if v < 0.0 {
        quote!((#lit))
    } else {
        lit
    }
}
