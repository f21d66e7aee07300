//! `BLOCK_SIZE`: the block size as a constant. Each block size is compiled on its own, so in
//! CUDA it is the translation unit's `GSYNC_BLOCK_SIZE`, and a constant computed from it
//! (`const WARPS: usize = BLOCK_SIZE / 32;`, the `2 * BLOCK_SIZE` of a shared array) is a
//! compile-time constant there. The macro cannot fold such a constant: it keeps it as a
//! [`BlockConst`], an expression tree that it evaluates for every block size a GPU allows, so
//! that the runtime can refuse, before compiling anything, the block sizes for which rustc's
//! evaluation would fail (an overflow, a division by zero), an array length would not be
//! positive, or the arrays would not fit.

use std::rc::Rc;

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use crate::check::{LOCAL_LIMIT, SHARED_LIMIT};
use crate::ir::{ArraySpace, BinOp, Kernel, Scalar, UnOp};
use crate::lower::consts::{binary, cast, unary};
use crate::lower::ConstValue;

/// The spelling of the constant in kernels.
pub const NAME: &str = "BLOCK_SIZE";

/// `BLOCK_SIZE` in CUDA.
pub const CUDA: &str = "((usize)GSYNC_BLOCK_SIZE)";

/// The block sizes the macro checks: every one a CUDA GPU allows.
pub const MAX_BLOCK_SIZE: u32 = 1024;

/// A constant whose value depends on the block size, with its type.
#[derive(Clone, Debug, PartialEq)]
pub struct BlockConst {
    pub kind: BlockConstKind,
    pub ty: Scalar,
}

/// A node of a [`BlockConst`].
#[derive(Clone, Debug, PartialEq)]
pub enum BlockConstKind {
    /// A value that does not depend on the block size.
    Value(ConstValue),
    /// `BLOCK_SIZE` itself (`usize`).
    BlockSize,
    Unary(UnOp, Rc<BlockConst>),
    Binary(BinOp, Rc<BlockConst>, Rc<BlockConst>),
    /// `as` the node's type.
    Cast(Rc<BlockConst>),
}

impl BlockConst {
    /// `BLOCK_SIZE`.
    pub fn block_size() -> Rc<BlockConst> {
        Rc::new(BlockConst { kind: BlockConstKind::BlockSize, ty: Scalar::Usize })
    }

    /// Its value for blocks of `threads` threads, evaluated as rustc would; the message of
    /// rustc's error where the evaluation fails.
    pub fn eval(&self, threads: u32) -> Result<ConstValue, String> {
        crate::stack::deep(|| match &self.kind {
            BlockConstKind::Value(v) => Ok(v.clone()),
            BlockConstKind::BlockSize => Ok(ConstValue::Int(i128::from(threads))),
            BlockConstKind::Unary(op, a) => unary(*op, a.eval(threads)?, self.ty),
            BlockConstKind::Binary(op, a, b) => binary(*op, a.eval(threads)?, b.eval(threads)?, a.ty),
            BlockConstKind::Cast(a) => Ok(cast(a.eval(threads)?, self.ty)),
        })
    }

    /// A CUDA constant expression of it, in `GSYNC_BLOCK_SIZE`: plain C arithmetic, which
    /// means what Rust's does at every block size the runtime does not refuse.
    pub fn cuda(&self) -> String {
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
    pub fn rust(&self, threads: &TokenStream) -> TokenStream {
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

/// A constant sized by the block size that a kernel uses, to be checked at every block size.
#[derive(Clone, Debug)]
pub struct UsedBlockConst {
    /// How a message names it: "`const WARPS`", "the length of `tile`".
    pub what: String,
    pub value: Rc<BlockConst>,
    /// Where the kernel uses it.
    pub span: proc_macro2::Span,
    /// Whether it is an array length, which must also be positive.
    pub length: bool,
}

/// Block sizes `first..=last` a kernel cannot run with, and why (the same reason for each).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefusedBlockSizes {
    pub first: u32,
    pub last: u32,
    pub reason: String,
}

/// The block sizes `k` cannot run with: where one of its constants sized by the block size
/// fails to evaluate, an array length is not positive, or its shared (local) arrays need more
/// than a block (thread) can have. Consecutive sizes refused for the same reason form one
/// range. Empty for a kernel that does not read `BLOCK_SIZE`.
pub fn refused_block_sizes(k: &Kernel, used: &[UsedBlockConst]) -> Vec<RefusedBlockSizes> {
    let mut refused: Vec<RefusedBlockSizes> = Vec::new();
    if used.is_empty() {
        return refused;
    }
    for threads in 1..=MAX_BLOCK_SIZE {
        let Some(reason) = refusal(k, used, threads) else { continue };
        match refused.last_mut() {
            Some(last) if last.last + 1 == threads && last.reason == reason => last.last = threads,
            _ => refused.push(RefusedBlockSizes { first: threads, last: threads, reason }),
        }
    }
    refused
}

/// Why `k` cannot run with blocks of `threads` threads, if it cannot.
fn refusal(k: &Kernel, used: &[UsedBlockConst], threads: u32) -> Option<String> {
    for c in used {
        match c.value.eval(threads) {
            Err(message) => return Some(format!("{} fails: {message}", c.what)),
            Ok(ConstValue::Int(n)) if c.length && n <= 0 => {
                return Some(format!("{} is not positive, as an array length must be", c.what))
            }
            Ok(_) => {}
        }
    }
    for (space, max, whose) in [
        (ArraySpace::Shared, SHARED_LIMIT, "shared arrays of a block"),
        (ArraySpace::Local, LOCAL_LIMIT, "arrays of a thread"),
    ] {
        let bytes: u64 = k.arrays.iter().filter(|a| a.space == space).map(|a| array_bytes(a, threads)).sum();
        if bytes > max {
            return Some(format!("the {whose} need more than the {max} bytes ({} KiB) CUDA allows", max / 1024));
        }
    }
    None
}

/// The bytes of array `a` with blocks of `threads` threads.
fn array_bytes(a: &crate::ir::Array, threads: u32) -> u64 {
    let len = match (&a.len, &a.block_len) {
        (Some(n), _) => *n,
        (None, Some(c)) => match c.eval(threads) {
            Ok(ConstValue::Int(n)) => u64::try_from(n).unwrap_or(0),
            _ => 0,
        },
        (None, None) => 0,
    };
    len.saturating_mul(u64::from(a.elem.bits() / 8))
}

/// The runtime's value for `refused`.
pub fn refused_tokens(refused: &[RefusedBlockSizes]) -> TokenStream {
    let ranges = refused.iter().map(|r| {
        let (first, last, reason) = (r.first, r.last, &r.reason);
        quote!(::gsync::RefusedBlockSizes { first: #first, last: #last, reason: #reason })
    });
    quote!(&[#(#ranges),*])
}
