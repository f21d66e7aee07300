//! The emitters' side of `BLOCK_SIZE`: a constant sized by it as CUDA and as Rust, and the
//! block sizes the runtime refuses.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use crate::check::RefusedBlockSizes;
use crate::ir::{BlockConst, BlockConstKind, ConstValue, Scalar, UnOp};

/// `BLOCK_SIZE` in CUDA.
pub const CUDA: &str = "((usize)GSYNC_BLOCK_SIZE)";

/// A [`BlockConst`] in the emitted languages.
pub trait BlockConstCode {
    /// A CUDA constant expression of it, in `GSYNC_BLOCK_SIZE`.
    fn cuda(&self) -> String;
    /// A Rust expression of it, with `threads` (a `u32` expression) the block size.
    fn rust(&self, threads: &TokenStream) -> TokenStream;
}

impl BlockConstCode for BlockConst {
    /// A CUDA constant expression of it, in `GSYNC_BLOCK_SIZE`: plain C arithmetic, which
    /// means what Rust's does at every block size the runtime does not refuse.
    fn cuda(&self) -> String {
        crate::stack::deep(|| {
            let t = self.ty.name();
            match &self.kind {
                BlockConstKind::Value(ConstValue::Int(v)) if *v < 0 => format!("(({t})({v}ll))"),
                BlockConstKind::Value(ConstValue::Int(v)) => format!("(({t}){v}ull)"),
                BlockConstKind::Value(ConstValue::Float(v)) => format!("(({t}){v:?})"),
                BlockConstKind::Value(ConstValue::Bool(b)) => b.to_string(),
                BlockConstKind::Value(ConstValue::Block(c)) => c.cuda(),
                BlockConstKind::BlockSize => CUDA.to_owned(),
                BlockConstKind::Unary(UnOp::Neg, a) => format!("(({t})(-{}))", a.cuda()),
                BlockConstKind::Unary(UnOp::Not, a) if self.ty == Scalar::Bool => format!("(!{})", a.cuda()),
                BlockConstKind::Unary(UnOp::Not, a) => format!("(({t})(~{}))", a.cuda()),
                BlockConstKind::Binary(op, a, b) if op.is_comparison() || self.ty == Scalar::Bool => {
                    format!("({} {} {})", a.cuda(), op.symbol(), b.cuda())
                }
                BlockConstKind::Binary(op, a, b) => format!("(({t})({} {} {}))", a.cuda(), op.symbol(), b.cuda()),
                BlockConstKind::Cast(a) => format!("(({t}){})", a.cuda()),
            }
        })
    }

    /// A Rust expression of it, with `threads` (a `u32` expression) the block size: plain Rust
    /// arithmetic, as valid as the block size is.
    fn rust(&self, threads: &TokenStream) -> TokenStream {
        crate::stack::deep(|| {
            let t = format_ident!("{}", self.ty.name());
            match &self.kind {
                BlockConstKind::Value(ConstValue::Int(v)) => {
                    let v = proc_macro2::Literal::i128_unsuffixed(*v);
                    quote!((#v as #t))
                }
                BlockConstKind::Value(ConstValue::Float(v)) => {
                    let v = proc_macro2::Literal::f64_unsuffixed(*v);
                    quote!((#v as #t))
                }
                BlockConstKind::Value(ConstValue::Bool(b)) => quote!(#b),
                BlockConstKind::Value(ConstValue::Block(c)) => c.rust(threads),
                BlockConstKind::BlockSize => quote!((#threads as usize)),
                BlockConstKind::Unary(UnOp::Neg, a) => {
                    let a = a.rust(threads);
                    quote!((-#a))
                }
                BlockConstKind::Unary(UnOp::Not, a) => {
                    let a = a.rust(threads);
                    quote!((!#a))
                }
                BlockConstKind::Binary(op, a, b) => {
                    let (a, b) = (a.rust(threads), b.rust(threads));
                    let op: TokenStream = op.symbol().parse().unwrap_or_default();
                    quote!((#a #op #b))
                }
                BlockConstKind::Cast(a) => {
                    let a = a.rust(threads);
                    quote!((#a as #t))
                }
            }
        })
    }
}

/// The runtime's value for `refused`.
pub fn refused_tokens(refused: &[RefusedBlockSizes]) -> TokenStream {
    let private = crate::paths::private();
    let ranges = refused.iter().map(|r| {
        let (first, last, reason) = (r.first, r.last, &r.reason);
        quote!(#private::RefusedBlockSizes { first: #first, last: #last, reason: #reason })
    });
    quote!(&[#(#ranges),*])
}
