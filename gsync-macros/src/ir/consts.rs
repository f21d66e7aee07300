//! Constants: the values the macro folds (`const` items, literal arithmetic, array lengths)
//! and those it cannot fold because they depend on the block size.
//!
//! `BLOCK_SIZE` is the block size as a constant. Each block size is compiled on its own, so in
//! CUDA it is the translation unit's `GSYNC_BLOCK_SIZE`, and a constant computed from it
//! (`const WARPS: usize = BLOCK_SIZE / 32;`, the `2 * BLOCK_SIZE` of a shared array) is a
//! compile-time constant there. The macro keeps such a constant as a [`BlockConst`], an
//! expression tree that it evaluates for every block size a GPU allows, so that the runtime
//! can refuse, before compiling anything, the block sizes for which rustc's evaluation would
//! fail (an overflow, a division by zero), an array length would not be positive, or the
//! arrays would not fit (see `check::block_sizes`).

use std::rc::Rc;

use proc_macro2::Span;

use super::scalar::{BinOp, Scalar, UnOp};

/// The value of a constant.
#[derive(Clone, Debug, PartialEq)]
pub enum ConstValue {
    Int(i128),
    Float(f64),
    Bool(bool),
    /// A value computed from `BLOCK_SIZE`, known only per compiled block size.
    Block(Rc<BlockConst>),
}

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

/// `op value` in `ty`, as rustc evaluates it.
pub fn unary(op: UnOp, value: ConstValue, ty: Scalar) -> Result<ConstValue, String> {
    let overflow = || format!("this constant overflows `{}`", ty.name());
    match (op, value) {
        (UnOp::Neg, ConstValue::Int(v)) => in_range(-v, ty).map(ConstValue::Int).ok_or_else(overflow),
        (UnOp::Neg, ConstValue::Float(v)) => Ok(ConstValue::Float(-v)),
        (UnOp::Not, ConstValue::Bool(b)) => Ok(ConstValue::Bool(!b)),
        (UnOp::Not, ConstValue::Int(v)) => Ok(ConstValue::Int(wrap(!v, ty))),
        _ => Err(format!("cannot apply `{}` here in a constant", if op == UnOp::Neg { "-" } else { "!" })),
    }
}

/// `v` if `ty` holds it.
pub fn in_range(v: i128, ty: Scalar) -> Option<i128> {
    let (lo, hi) = ty.int_range();
    (lo..=hi).contains(&v).then_some(v)
}

/// `v` wrapped to `ty`'s width, as `as` and bitwise operations do.
fn wrap(v: i128, ty: Scalar) -> i128 {
    let bits = ty.bits();
    let mask = (1i128 << bits) - 1;
    let low = v & mask;
    if ty.is_signed_int() && low >> (bits - 1) & 1 == 1 {
        low - (1i128 << bits)
    } else {
        low
    }
}

/// `v` rounded to the precision of float type `ty`.
pub fn round_to(v: f64, ty: Scalar) -> f64 {
    if ty == Scalar::F32 {
        v as f32 as f64
    } else {
        v
    }
}

/// `x op y` with operands of type `ty`, as rustc evaluates it.
pub fn binary(op: BinOp, x: ConstValue, y: ConstValue, ty: Scalar) -> Result<ConstValue, String> {
    use ConstValue::*;
    let overflow = || format!("this constant overflows `{}`", ty.name());
    match (x, y) {
        (Bool(a), Bool(b)) => Ok(Bool(match op {
            BinOp::And | BinOp::BitAnd => a && b,
            BinOp::Or | BinOp::BitOr => a || b,
            BinOp::BitXor | BinOp::Ne => a != b,
            BinOp::Eq => a == b,
            BinOp::Lt => !a & b,
            BinOp::Le => a <= b,
            BinOp::Gt => a & !b,
            BinOp::Ge => a >= b,
            _ => return Err(format!("cannot apply `{}` to `bool` in a constant", op.symbol())),
        })),
        (Int(a), Int(b)) => {
            if op.is_comparison() {
                return Ok(Bool(compare(op, a.cmp(&b))));
            }
            let checked = |v: Option<i128>| v.and_then(|v| in_range(v, ty)).map(Int).ok_or_else(overflow);
            match op {
                BinOp::Add => checked(a.checked_add(b)),
                BinOp::Sub => checked(a.checked_sub(b)),
                BinOp::Mul => checked(a.checked_mul(b)),
                BinOp::Div | BinOp::Rem if b == 0 => Err("division by zero in a constant".to_owned()),
                BinOp::Div => checked(a.checked_div(b)),
                // `MIN % -1` overflows in the type, as `MIN / -1` does, though not in `i128`.
                BinOp::Rem if ty.is_signed_int() && b == -1 && a == ty.int_range().0 => Err(format!(
                    "this constant overflows `{}`: the remainder of `{}::MIN % -1` would overflow",
                    ty.name(),
                    ty.name()
                )),
                BinOp::Rem => checked(a.checked_rem(b)),
                BinOp::BitAnd => Ok(Int(a & b)),
                BinOp::BitOr => Ok(Int(a | b)),
                BinOp::BitXor => Ok(Int(a ^ b)),
                BinOp::Shl | BinOp::Shr if b < 0 || b >= ty.bits() as i128 => {
                    Err(format!("this shift by {b} overflows `{}`: shift by less than {}", ty.name(), ty.bits()))
                }
                BinOp::Shl => Ok(Int(wrap(a << b, ty))),
                BinOp::Shr => Ok(Int(a >> b)),
                _ => Err(format!("cannot apply `{}` to integers in a constant", op.symbol())),
            }
        }
        (Float(a), Float(b)) => {
            if op.is_comparison() {
                return Ok(Bool(match a.partial_cmp(&b) {
                    Some(o) => compare(op, o),
                    None => op == BinOp::Ne,
                }));
            }
            let v = match (op, ty) {
                (BinOp::Add, Scalar::F32) => (a as f32 + b as f32) as f64,
                (BinOp::Sub, Scalar::F32) => (a as f32 - b as f32) as f64,
                (BinOp::Mul, Scalar::F32) => (a as f32 * b as f32) as f64,
                (BinOp::Div, Scalar::F32) => (a as f32 / b as f32) as f64,
                (BinOp::Rem, Scalar::F32) => (a as f32 % b as f32) as f64,
                (BinOp::Add, _) => a + b,
                (BinOp::Sub, _) => a - b,
                (BinOp::Mul, _) => a * b,
                (BinOp::Div, _) => a / b,
                (BinOp::Rem, _) => a % b,
                _ => return Err(format!("cannot apply `{}` to floats in a constant", op.symbol())),
            };
            Ok(Float(v))
        }
        // A shift's amount may have another integer type than its value.
        _ => Err("mismatched types in a constant".to_owned()),
    }
}

fn compare(op: BinOp, o: std::cmp::Ordering) -> bool {
    use std::cmp::Ordering::*;
    match op {
        BinOp::Eq => o == Equal,
        BinOp::Ne => o != Equal,
        BinOp::Lt => o == Less,
        BinOp::Le => o != Greater,
        BinOp::Gt => o == Greater,
        _ => o != Less,
    }
}

/// `value as ty`, with Rust's semantics: integers wrap, floats saturate to integers.
pub fn cast(value: ConstValue, ty: Scalar) -> ConstValue {
    use ConstValue::*;
    match (value, ty) {
        (Int(v), t) if t.is_int() => Int(wrap(v, t)),
        (Int(v), t) if t.is_float() => Float(round_to(v as f64, t)),
        (Float(v), t) if t.is_float() => Float(round_to(v, t)),
        (Float(v), t) if t.is_int() => {
            let (lo, hi) = t.int_range();
            Int(if v.is_nan() {
                0
            } else if v <= lo as f64 {
                lo
            } else if v >= hi as f64 {
                hi
            } else {
                v.trunc() as i128
            })
        }
        (Bool(b), t) if t.is_int() => Int(b as i128),
        (other, _) => other,
    }
}

/// A `const NAME: [T; N] = [a, b, …];` (or `[v; N]`) of a `#[gsync::kernels]` module: a
/// lookup table that its kernels and device functions read.
pub struct ConstTable {
    pub name: String,
    pub elem: Scalar,
    pub values: Vec<ConstValue>,
    pub span: Span,
}
