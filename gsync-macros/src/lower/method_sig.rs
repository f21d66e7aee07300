//! The signature of a method or function kernels may call: its argument and result types,
//! as the tables of `methods` and `half_precision` give them.

use crate::ir::{MathFn, Scalar};

/// An argument's required type.
#[derive(Clone, Copy)]
pub enum ArgTy {
    /// The receiver's type.
    Same,
    Scalar(Scalar),
}

/// A result type.
#[derive(Clone, Copy)]
pub enum RetTy {
    Same,
    Scalar(Scalar),
}

/// A method: the function and its types (receiver first).
pub struct MethodSig {
    pub func: MathFn,
    pub args: Vec<ArgTy>,
    pub ret: RetTy,
}
