//! The tables of builtins, methods and constants kernels may use, with the
//! CUDA each becomes. `{0}` is the receiver, `{1}`… the arguments.

use super::ConstValue;
use crate::ir::{AtomicOp, Builtin, Scalar};

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

/// A method: the CUDA template and the types (receiver first).
pub struct MethodSig {
    pub c_template: &'static str,
    /// The Rust method (or `Type::function`) with the same meaning, for host code.
    pub rust: &'static str,
    pub args: Vec<ArgTy>,
    pub ret: RetTy,
}

fn sig(c_template: &'static str, args: &[ArgTy], ret: RetTy) -> Option<MethodSig> {
    Some(MethodSig { c_template, rust: "", args: args.to_vec(), ret })
}

/// Looks up `receiver.name(...)` for a receiver type, with its Rust name.
pub fn method(name: &str, recv: Scalar) -> Option<MethodSig> {
    let sig = if recv.is_float() {
        float_method(name, recv == Scalar::F32)
    } else if recv.is_int() {
        int_method(name, recv)
    } else {
        None
    }?;
    let rust = METHOD_NAMES.iter().find(|n| **n == name)?;
    Some(MethodSig { rust, ..sig })
}

/// Every method name of the tables below, as `'static` strings for the IR.
const METHOD_NAMES: &[&str] = &[
    "sqrt",
    "abs",
    "floor",
    "ceil",
    "round",
    "trunc",
    "exp",
    "exp2",
    "ln",
    "log2",
    "log10",
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "sinh",
    "cosh",
    "tanh",
    "cbrt",
    "recip",
    "signum",
    "min",
    "max",
    "powf",
    "atan2",
    "hypot",
    "copysign",
    "powi",
    "mul_add",
    "clamp",
    "is_nan",
    "is_finite",
    "is_infinite",
    "is_sign_negative",
    "to_bits",
    "wrapping_abs",
    "abs_diff",
    "pow",
    "wrapping_pow",
    "wrapping_add",
    "wrapping_sub",
    "wrapping_mul",
    "wrapping_div",
    "wrapping_rem",
    "wrapping_neg",
    "wrapping_shl",
    "wrapping_shr",
    "saturating_add",
    "saturating_sub",
    "div_ceil",
    "next_power_of_two",
    "is_multiple_of",
    "is_power_of_two",
    "count_ones",
    "leading_zeros",
    "trailing_zeros",
    "ilog2",
    "rotate_left",
    "rotate_right",
];

use ArgTy::Same as S;
const U32: ArgTy = ArgTy::Scalar(Scalar::U32);

fn float_method(name: &str, f32: bool) -> Option<MethodSig> {
    let same = RetTy::Same;
    let pick = |a: &'static str, b: &'static str| if f32 { a } else { b };
    let unary = |a, b| sig(pick(a, b), &[S], same);
    let binary = |a, b| sig(pick(a, b), &[S, S], same);
    let bool_ret = RetTy::Scalar(Scalar::Bool);
    match name {
        "sqrt" => unary("sqrtf({0})", "sqrt({0})"),
        "abs" => unary("fabsf({0})", "fabs({0})"),
        "floor" => unary("floorf({0})", "floor({0})"),
        "ceil" => unary("ceilf({0})", "ceil({0})"),
        "round" => unary("roundf({0})", "round({0})"),
        "trunc" => unary("truncf({0})", "trunc({0})"),
        "exp" => unary("expf({0})", "exp({0})"),
        "exp2" => unary("exp2f({0})", "exp2({0})"),
        "ln" => unary("logf({0})", "log({0})"),
        "log2" => unary("log2f({0})", "log2({0})"),
        "log10" => unary("log10f({0})", "log10({0})"),
        "sin" => unary("sinf({0})", "sin({0})"),
        "cos" => unary("cosf({0})", "cos({0})"),
        "tan" => unary("tanf({0})", "tan({0})"),
        "asin" => unary("asinf({0})", "asin({0})"),
        "acos" => unary("acosf({0})", "acos({0})"),
        "atan" => unary("atanf({0})", "atan({0})"),
        "sinh" => unary("sinhf({0})", "sinh({0})"),
        "cosh" => unary("coshf({0})", "cosh({0})"),
        "tanh" => unary("tanhf({0})", "tanh({0})"),
        "cbrt" => unary("cbrtf({0})", "cbrt({0})"),
        "recip" => unary("(1.0f / {0})", "(1.0 / {0})"),
        "signum" => unary("gsync::signum({0})", "gsync::signum({0})"),
        "min" => binary("fminf({0}, {1})", "fmin({0}, {1})"),
        "max" => binary("fmaxf({0}, {1})", "fmax({0}, {1})"),
        "powf" => binary("powf({0}, {1})", "pow({0}, {1})"),
        "atan2" => binary("atan2f({0}, {1})", "atan2({0}, {1})"),
        "hypot" => binary("hypotf({0}, {1})", "hypot({0}, {1})"),
        "copysign" => binary("copysignf({0}, {1})", "copysign({0}, {1})"),
        "powi" => sig(pick("powf({0}, (f32){1})", "pow({0}, (f64){1})"), &[S, ArgTy::Scalar(Scalar::I32)], same),
        "mul_add" => sig(pick("fmaf({0}, {1}, {2})", "fma({0}, {1}, {2})"), &[S, S, S], same),
        "clamp" => sig("gsync::clamp({0}, {1}, {2})", &[S, S, S], same),
        "is_nan" => sig("isnan({0})", &[S], bool_ret),
        "is_finite" => sig("isfinite({0})", &[S], bool_ret),
        "is_infinite" => sig("isinf({0})", &[S], bool_ret),
        "is_sign_negative" => sig("signbit({0})", &[S], bool_ret),
        "to_bits" if f32 => sig("__float_as_uint({0})", &[S], RetTy::Scalar(Scalar::U32)),
        "to_bits" => sig("(u64)__double_as_longlong({0})", &[S], RetTy::Scalar(Scalar::U64)),
        _ => None,
    }
}

fn int_method(name: &str, recv: Scalar) -> Option<MethodSig> {
    let same = RetTy::Same;
    let u32_ret = RetTy::Scalar(Scalar::U32);
    let signed = recv.is_signed_int();
    match name {
        "min" => sig("gsync::min({0}, {1})", &[S, S], same),
        "max" => sig("gsync::max({0}, {1})", &[S, S], same),
        "clamp" => sig("gsync::clamp({0}, {1}, {2})", &[S, S, S], same),
        "abs" | "wrapping_abs" if signed => sig("gsync::abs({0})", &[S], same),
        "signum" if signed => sig("gsync::signum({0})", &[S], same),
        "abs_diff" => sig(abs_diff_template(recv), &[S, S], RetTy::Scalar(unsigned_of(recv))),
        "pow" | "wrapping_pow" => sig("gsync::pow({0}, {1})", &[S, U32], same),
        "wrapping_add" => sig("gsync::add({0}, {1})", &[S, S], same),
        "wrapping_sub" => sig("gsync::sub({0}, {1})", &[S, S], same),
        "wrapping_mul" => sig("gsync::mul({0}, {1})", &[S, S], same),
        "wrapping_div" => sig("gsync::div({0}, {1})", &[S, S], same),
        "wrapping_rem" => sig("gsync::rem({0}, {1})", &[S, S], same),
        "wrapping_neg" => sig("gsync::neg({0})", &[S], same),
        "wrapping_shl" => sig("gsync::shl({0}, {1})", &[S, U32], same),
        "wrapping_shr" => sig("gsync::shr({0}, {1})", &[S, U32], same),
        "saturating_add" => sig("gsync::saturating_add({0}, {1})", &[S, S], same),
        "saturating_sub" => sig("gsync::saturating_sub({0}, {1})", &[S, S], same),
        "div_ceil" if !signed => sig("gsync::div_ceil({0}, {1})", &[S, S], same),
        "next_power_of_two" if !signed => sig("gsync::next_power_of_two({0})", &[S], same),
        "is_multiple_of" if !signed => sig("gsync::is_multiple_of({0}, {1})", &[S, S], RetTy::Scalar(Scalar::Bool)),
        "is_power_of_two" if !signed => sig("gsync::is_power_of_two({0})", &[S], RetTy::Scalar(Scalar::Bool)),
        "count_ones" => sig("gsync::count_ones({0})", &[S], u32_ret),
        "leading_zeros" => sig("gsync::leading_zeros({0})", &[S], u32_ret),
        "trailing_zeros" => sig("gsync::trailing_zeros({0})", &[S], u32_ret),
        "ilog2" => sig("gsync::ilog2({0})", &[S], u32_ret),
        "rotate_left" => sig("gsync::rotate_left({0}, {1})", &[S, U32], same),
        "rotate_right" => sig("gsync::rotate_right({0}, {1})", &[S, U32], same),
        _ => None,
    }
}

fn abs_diff_template(recv: Scalar) -> &'static str {
    match unsigned_of(recv) {
        Scalar::U8 => "(u8)gsync::abs_diff({0}, {1})",
        Scalar::U16 => "(u16)gsync::abs_diff({0}, {1})",
        Scalar::U32 => "(u32)gsync::abs_diff({0}, {1})",
        Scalar::Usize => "(usize)gsync::abs_diff({0}, {1})",
        _ => "(u64)gsync::abs_diff({0}, {1})",
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
        _ => return None,
    })
}

/// Every builtin returns `u32`.
pub fn builtin_type(_: Builtin) -> Scalar {
    Scalar::U32
}

/// Which atomics CUDA offers for which element types.
pub fn atomic_supported(op: AtomicOp, elem: Scalar) -> bool {
    use Scalar::*;
    match op {
        AtomicOp::Add | AtomicOp::Exch => matches!(elem, I32 | U32 | I64 | U64 | F32 | F64),
        AtomicOp::Min | AtomicOp::Max | AtomicOp::Cas => matches!(elem, I32 | U32 | I64 | U64),
    }
}

/// `u32::MAX`, `f32::EPSILON`, `f32::consts::PI`, `core::f64::consts::E`, …
pub fn associated_const(path: &syn::Path) -> Option<(ConstValue, Scalar)> {
    let segs: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    let segs: Vec<&str> = segs.iter().map(String::as_str).skip_while(|s| matches!(*s, "std" | "core")).collect();
    match segs.as_slice() {
        [ty, "consts", name] => float_const(Scalar::from_name(ty)?, name, true),
        [ty, name] => {
            let ty = Scalar::from_name(ty)?;
            if ty.is_float() {
                float_const(ty, name, false)
            } else if ty.is_int() {
                int_const(ty, name)
            } else {
                None
            }
        }
        _ => None,
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
