//! The tables of builtins, methods and constants kernels may use: which
//! exist for which types, and how their arguments and results are typed.

use super::method_sig::{ArgTy, MethodSig, RetTy};
use crate::ir::{AtomicOp, Axis, Builtin, ConstValue, MathFn, Scalar};

fn sig(func: MathFn, args: &[ArgTy], ret: RetTy) -> Option<MethodSig> {
    Some(MethodSig { func, args: args.to_vec(), ret })
}

/// Looks up `receiver.name(...)` for a receiver type.
pub fn method(name: &str, recv: Scalar) -> Option<MethodSig> {
    let func = MathFn::from_name(name)?;
    if recv.is_float() {
        float_method(func, recv)
    } else if recv.is_int() {
        int_method(func, recv)
    } else if recv.is_half() {
        super::half_precision::method(func, recv)
    } else {
        None
    }
}

use ArgTy::Same as S;
const U32: ArgTy = ArgTy::Scalar(Scalar::U32);

fn float_method(f: MathFn, recv: Scalar) -> Option<MethodSig> {
    use MathFn::*;
    let same = RetTy::Same;
    let bool_ret = RetTy::Scalar(Scalar::Bool);
    match f {
        Sqrt | Abs | Floor | Ceil | Round | Trunc | Exp | Exp2 | Ln | Log2 | Log10 | Sin | Cos | Tan | Asin | Acos
        | Atan | Sinh | Cosh | Tanh | Cbrt | Recip | Signum => sig(f, &[S], same),
        Min | Max | Powf | Atan2 | Hypot | Copysign => sig(f, &[S, S], same),
        Powi => sig(f, &[S, ArgTy::Scalar(Scalar::I32)], same),
        MulAdd | Clamp => sig(f, &[S, S, S], same),
        IsNan | IsFinite | IsInfinite | IsSignNegative => sig(f, &[S], bool_ret),
        ToBits if recv == Scalar::F32 => sig(f, &[S], RetTy::Scalar(Scalar::U32)),
        ToBits => sig(f, &[S], RetTy::Scalar(Scalar::U64)),
        _ => None,
    }
}

fn int_method(f: MathFn, recv: Scalar) -> Option<MethodSig> {
    use MathFn::*;
    let same = RetTy::Same;
    let u32_ret = RetTy::Scalar(Scalar::U32);
    let bool_ret = RetTy::Scalar(Scalar::Bool);
    let signed = recv.is_signed_int();
    match f {
        Min | Max => sig(f, &[S, S], same),
        Clamp => sig(f, &[S, S, S], same),
        Abs | WrappingAbs | Signum if signed => sig(f, &[S], same),
        AbsDiff => sig(f, &[S, S], RetTy::Scalar(unsigned_of(recv))),
        Pow | WrappingPow | WrappingShl | WrappingShr | RotateLeft | RotateRight => sig(f, &[S, U32], same),
        WrappingAdd | WrappingSub | WrappingMul | WrappingDiv | WrappingRem | SaturatingAdd | SaturatingSub => {
            sig(f, &[S, S], same)
        }
        WrappingNeg => sig(f, &[S], same),
        DivCeil if !signed => sig(f, &[S, S], same),
        NextPowerOfTwo if !signed => sig(f, &[S], same),
        IsMultipleOf if !signed => sig(f, &[S, S], bool_ret),
        IsPowerOfTwo if !signed => sig(f, &[S], bool_ret),
        CountOnes | LeadingZeros | TrailingZeros | Ilog2 => sig(f, &[S], u32_ret),
        _ => None,
    }
}

fn unsigned_of(s: Scalar) -> Scalar {
    match s {
        Scalar::I8 => Scalar::U8,
        Scalar::I16 => Scalar::U16,
        Scalar::I32 => Scalar::U32,
        Scalar::I64 => Scalar::U64,
        other => other,
    }
}

/// The launch-shape builtins, by name.
pub fn builtin(name: &str) -> Option<Builtin> {
    Some(match name {
        "thread_idx" => Builtin::ThreadIdx,
        "block_idx" => Builtin::BlockIdx,
        "block_dim" => Builtin::BlockDim,
        "grid_dim" => Builtin::GridDim,
        "global_id" => Builtin::GlobalId,
        "grid_size" => Builtin::GridSize,
        "lane_id" => Builtin::LaneId,
        "warp_size" => Builtin::WarpSize,
        "warp_id" => Builtin::WarpId,
        "pe" => Builtin::Pe,
        "n_pes" => Builtin::NPes,
        _ => return axis_builtin(name),
    })
}

/// The per-axis builtin named `name` (`thread_idx_y`, `grid_dim_z`, …), if it is one.
pub fn axis_builtin(name: &str) -> Option<Builtin> {
    let (base, axis) = name.rsplit_once('_')?;
    let axis = Axis::ALL.into_iter().find(|a| a.name() == axis)?;
    Some(match base {
        "thread_idx" => Builtin::ThreadIdxAxis(axis),
        "block_idx" => Builtin::BlockIdxAxis(axis),
        "block_dim" => Builtin::BlockDimAxis(axis),
        "grid_dim" => Builtin::GridDimAxis(axis),
        _ => return None,
    })
}

/// Every builtin returns `u32`, but `BLOCK_SIZE`, a `usize` like the lengths it sizes.
pub fn builtin_type(b: Builtin) -> Scalar {
    match b {
        Builtin::BlockSize => Scalar::Usize,
        _ => Scalar::U32,
    }
}

/// Which atomics CUDA offers for which element types.
pub fn atomic_supported(op: AtomicOp, elem: Scalar) -> bool {
    use Scalar::*;
    match op {
        AtomicOp::Add | AtomicOp::Exch => matches!(elem, I32 | U32 | I64 | U64 | F32 | F64 | F16 | Bf16),
        AtomicOp::Min | AtomicOp::Max => matches!(elem, I32 | U32 | I64 | U64 | F32 | F64 | F16 | Bf16),
        AtomicOp::Cas => matches!(elem, I32 | U32 | I64 | U64),
        AtomicOp::Load | AtomicOp::Store | AtomicOp::Get | AtomicOp::Put => elem != Bool && elem != Usize,
        AtomicOp::Signal | AtomicOp::LoadSignal => matches!(elem, I32 | U32 | I64 | U64),
    }
}

/// `u32::MAX`, `f32::EPSILON`, `f32::consts::PI`, `core::f64::consts::E`, …
/// (`type_named` resolves the type's name, a type parameter included).
pub fn associated_const(path: &syn::Path, type_named: &dyn Fn(&str) -> Option<Scalar>) -> Option<(ConstValue, Scalar)> {
    let segs: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    let segs: Vec<&str> = segs.iter().map(String::as_str).skip_while(|s| matches!(*s, "std" | "core")).collect();
    match segs.as_slice() {
        [ty, "consts", name] => float_const(type_named(ty)?, name, true),
        [ty, "ZERO"] => zero_one(type_named(ty)?, 0),
        [ty, "ONE"] => zero_one(type_named(ty)?, 1),
        [ty, name] => {
            let ty = type_named(ty)?;
            if ty.is_float() {
                float_const(ty, name, false)
            } else if ty.is_int() {
                int_const(ty, name)
            } else if ty.is_half() {
                super::half_precision::associated_const(ty, name)
            } else {
                None
            }
        }
        _ => None,
    }
}

/// `T::ZERO` and `T::ONE` of the `Num` bound.
fn zero_one(ty: Scalar, v: i8) -> Option<(ConstValue, Scalar)> {
    match ty {
        Scalar::Bool => None,
        t if t.is_float() || t.is_half() => Some((ConstValue::Float(v as f64), t)),
        t => Some((ConstValue::Int(v as i128), t)),
    }
}

fn int_const(ty: Scalar, name: &str) -> Option<(ConstValue, Scalar)> {
    let (min, max) = ty.int_range();
    match name {
        "MIN" => Some((ConstValue::Int(min), ty)),
        "MAX" => Some((ConstValue::Int(max), ty)),
        "BITS" => Some((ConstValue::Int(ty.bits() as i128), Scalar::U32)),
        _ => None,
    }
}

fn float_const(ty: Scalar, name: &str, math: bool) -> Option<(ConstValue, Scalar)> {
    if !ty.is_float() {
        return None;
    }
    let f32 = ty == Scalar::F32;
    let v = if math {
        use std::f64::consts as c;
        match name {
            "PI" => c::PI,
            "TAU" => c::TAU,
            "E" => c::E,
            "SQRT_2" => c::SQRT_2,
            "LN_2" => c::LN_2,
            "LN_10" => c::LN_10,
            "FRAC_PI_2" => c::FRAC_PI_2,
            "FRAC_1_SQRT_2" => c::FRAC_1_SQRT_2,
            _ => return None,
        }
    } else {
        match (name, f32) {
            ("MAX", true) => f32::MAX as f64,
            ("MIN", true) => f32::MIN as f64,
            ("MIN_POSITIVE", true) => f32::MIN_POSITIVE as f64,
            ("EPSILON", true) => f32::EPSILON as f64,
            ("MAX", false) => f64::MAX,
            ("MIN", false) => f64::MIN,
            ("MIN_POSITIVE", false) => f64::MIN_POSITIVE,
            ("EPSILON", false) => f64::EPSILON,
            ("INFINITY", _) => f64::INFINITY,
            ("NEG_INFINITY", _) => f64::NEG_INFINITY,
            ("NAN", _) => f64::NAN,
            _ => return None,
        }
    };
    // Constants are rounded to the type once, as Rust does.
    let v = if f32 { v as f32 as f64 } else { v };
    Some((ConstValue::Float(v), ty))
}
