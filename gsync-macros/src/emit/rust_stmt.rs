//! Kernel statements as Rust, shared by the CPU emulator and the split
//! kernel's host code: declarations, assignments and control flow read
//! the same in both. Each emitter shows the shared code its statements as a
//! [`View`] and writes the statements only it has: the emulator its stores,
//! thread-local arrays and barriers, the host code its segment launches.

use crate::emit::rust_expr::{scalar_type, RustContext, RustExpr};
use crate::emit::rust_names::{leave_label, var_ident};
use crate::ir::{BinOp, CallId, Expr, ForRange, Kernel, VarId};
use proc_macro2::TokenStream;
use quote::quote;

/// A statement as the shared emission sees it; `S` is the emitter's statement type.
pub enum View<'s, S> {
    /// `let x: T = e;`, or `let mut x: T;` without a value.
    Let {
        var: VarId,
        init: Option<&'s Expr>,
    },
    /// `x = e;`, or `x op= e` with the DSL's meaning of `op`.
    Assign {
        var: VarId,
        op: Option<BinOp>,
        value: &'s Expr,
    },
    If {
        cond: &'s Expr,
        then: &'s [S],
        otherwise: Option<&'s [S]>,
    },
    While {
        cond: &'s Expr,
        body: &'s [S],
    },
    Loop {
        body: &'s [S],
    },
    For {
        var: VarId,
        range: &'s ForRange,
        body: &'s [S],
    },
    Break,
    Continue,
    Block(&'s [S]),
    /// A device function's inlined body: a block, labeled when a `return` leaves it.
    Inline {
        call: CallId,
        body: &'s [S],
    },
    /// `return` in a device function: `break` out of its labeled block.
    Leave(CallId),
    /// A statement only this emitter has: [`RustStmts::own`] writes it.
    Own,
}

/// What differs between the Rust emitters' statements. Their expressions
/// differ through [`RustContext`].
pub trait RustStmts: RustContext + Sized {
    /// The statements the emitter walks.
    type Stmt;

    /// The kernel the statements belong to.
    fn kernel(&self) -> &Kernel;

    /// How the shared code sees a statement.
    fn view<'s>(&self, s: &'s Self::Stmt) -> View<'s, Self::Stmt>;

    /// A statement the view calls [`View::Own`].
    fn own(&self, s: &Self::Stmt) -> TokenStream;

    /// What runs as one iteration of a loop whose statements are `body`.
    fn loop_body(&self, body: TokenStream) -> TokenStream {
        body
    }

    /// A `for` over a `grid_stride` or `block_stride` range, `body` being its
    /// emitted [`loop_body`](RustStmts::loop_body).
    fn strided_for(&self, var: VarId, range: &ForRange, body: TokenStream) -> TokenStream;
}

/// A block of statements as Rust.
pub fn block<E: RustStmts>(e: &E, stmts: &[E::Stmt]) -> TokenStream {
    let stmts = stmts.iter().map(|s| stmt(e, s));
    quote!(#(#stmts)*)
}

fn stmt<E: RustStmts>(e: &E, s: &E::Stmt) -> TokenStream {
    crate::stack::deep(|| stmt_inner(e, s))
}

fn stmt_inner<E: RustStmts>(e: &E, s: &E::Stmt) -> TokenStream {
    let k = e.kernel();
    let rust = RustExpr { k, ctx: e };
    match e.view(s) {
        View::Let { var, init } => {
            let id = var_ident(k, var);
            let ty = scalar_type(k.var(var).ty);
            let mutability = if k.var(var).mutable || init.is_none() { quote!(mut) } else { quote!() };
            match init {
                Some(value) => {
                    let value = rust.expr(value);
                    quote!(let #mutability #id: #ty = #value;)
                }
                None => quote!(let #mutability #id: #ty;),
            }
        }
        View::Assign { var, op, value } => {
            let id = var_ident(k, var);
            let value = match op {
                None => rust.expr(value),
                Some(op) => rust.binary(op, k.var(var).ty, quote!(#id), rust.expr(value)),
            };
            quote!(#id = #value;)
        }
        View::If { cond, then, otherwise } => {
            let (c, t) = (rust.expr(cond), block(e, then));
            match otherwise {
                Some(o) => {
                    let o = block(e, o);
                    quote!(if #c { #t } else { #o })
                }
                None => quote!(if #c { #t }),
            }
        }
        View::While { cond, body } => {
            let (c, b) = (rust.expr(cond), e.loop_body(block(e, body)));
            quote!(while #c { #b })
        }
        View::Loop { body } => {
            let b = e.loop_body(block(e, body));
            quote!(loop { #b })
        }
        View::For { var, range, body } => {
            let b = e.loop_body(block(e, body));
            match range {
                ForRange::Seq { start, end, inclusive, step, reverse } => {
                    let id = var_ident(k, var);
                    let iter = rust.seq_iter(start, end, *inclusive, step.as_ref(), *reverse);
                    quote!(for #id in #iter { #b })
                }
                _ => e.strided_for(var, range, b),
            }
        }
        View::Break => quote!(break;),
        View::Continue => quote!(continue;),
        View::Block(b) => {
            let b = block(e, b);
            quote!({ #b })
        }
        View::Inline { call, body } => {
            let b = block(e, body);
            if k.call(call).leaves {
                let label = leave_label(k, call);
                quote!(#label: { #b })
            } else {
                quote!({ #b })
            }
        }
        View::Leave(call) => {
            let label = leave_label(k, call);
            quote!(break #label;)
        }
        View::Own => e.own(s),
    }
}
