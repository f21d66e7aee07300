//! The CUDA that the IR's calls, atomics and shuffles become: CUDA's math
//! functions and the prelude's `gsync::` helpers.

use crate::ir::{AtomicOp, MathFn, MemoryOrder, Scalar, ShuffleOp};

/// The CUDA template of a math-table call on an `operand` (the receiver's
/// type) giving a `result`: `{0}` is the receiver, `{1}`… the arguments.
pub fn math_template(f: MathFn, operand: Scalar, result: Scalar) -> &'static str {
    use MathFn::*;
    if operand.is_half() || result.is_half() {
        return half_template(f, result);
    }
    let float = operand.is_float();
    let pick = |f32: &'static str, f64: &'static str| if operand == Scalar::F32 { f32 } else { f64 };
    match f {
        Sqrt => pick("sqrtf({0})", "sqrt({0})"),
        Abs if float => pick("fabsf({0})", "fabs({0})"),
        Abs | WrappingAbs => "gsync::abs({0})",
        Floor => pick("floorf({0})", "floor({0})"),
        Ceil => pick("ceilf({0})", "ceil({0})"),
        Round => pick("roundf({0})", "round({0})"),
        Trunc => pick("truncf({0})", "trunc({0})"),
        Exp => pick("expf({0})", "exp({0})"),
        Exp2 => pick("exp2f({0})", "exp2({0})"),
        Ln => pick("logf({0})", "log({0})"),
        Log2 => pick("log2f({0})", "log2({0})"),
        Log10 => pick("log10f({0})", "log10({0})"),
        Sin => pick("sinf({0})", "sin({0})"),
        Cos => pick("cosf({0})", "cos({0})"),
        Tan => pick("tanf({0})", "tan({0})"),
        Asin => pick("asinf({0})", "asin({0})"),
        Acos => pick("acosf({0})", "acos({0})"),
        Atan => pick("atanf({0})", "atan({0})"),
        Sinh => pick("sinhf({0})", "sinh({0})"),
        Cosh => pick("coshf({0})", "cosh({0})"),
        Tanh => pick("tanhf({0})", "tanh({0})"),
        Cbrt => pick("cbrtf({0})", "cbrt({0})"),
        Recip => pick("(1.0f / {0})", "(1.0 / {0})"),
        Signum => "gsync::signum({0})",
        Min if float => pick("fminf({0}, {1})", "fmin({0}, {1})"),
        Min => "gsync::min({0}, {1})",
        Max if float => pick("fmaxf({0}, {1})", "fmax({0}, {1})"),
        Max => "gsync::max({0}, {1})",
        Powf => pick("powf({0}, {1})", "pow({0}, {1})"),
        Atan2 => pick("atan2f({0}, {1})", "atan2({0}, {1})"),
        Hypot => pick("hypotf({0}, {1})", "hypot({0}, {1})"),
        Copysign => pick("copysignf({0}, {1})", "copysign({0}, {1})"),
        Powi => pick("powf({0}, (f32){1})", "pow({0}, (f64){1})"),
        MulAdd => pick("fmaf({0}, {1}, {2})", "fma({0}, {1}, {2})"),
        Clamp => "gsync::clamp({0}, {1}, {2})",
        IsNan => "isnan({0})",
        IsFinite => "isfinite({0})",
        IsInfinite => "isinf({0})",
        IsSignNegative => "signbit({0})",
        ToBits => pick("__float_as_uint({0})", "(u64)__double_as_longlong({0})"),
        FromBits if result == Scalar::F32 => "__uint_as_float({0})",
        FromBits => "__longlong_as_double((i64){0})",
        AbsDiff => match result {
            Scalar::U8 => "(u8)gsync::abs_diff({0}, {1})",
            Scalar::U16 => "(u16)gsync::abs_diff({0}, {1})",
            Scalar::U32 => "(u32)gsync::abs_diff({0}, {1})",
            Scalar::Usize => "(usize)gsync::abs_diff({0}, {1})",
            _ => "(u64)gsync::abs_diff({0}, {1})",
        },
        Pow | WrappingPow => "gsync::pow({0}, {1})",
        WrappingAdd => "gsync::add({0}, {1})",
        WrappingSub => "gsync::sub({0}, {1})",
        WrappingMul => "gsync::mul({0}, {1})",
        WrappingDiv => "gsync::div({0}, {1})",
        WrappingRem => "gsync::rem({0}, {1})",
        WrappingNeg => "gsync::neg({0})",
        WrappingShl => "gsync::shl({0}, {1})",
        WrappingShr => "gsync::shr({0}, {1})",
        SaturatingAdd => "gsync::saturating_add({0}, {1})",
        SaturatingSub => "gsync::saturating_sub({0}, {1})",
        DivCeil => "gsync::div_ceil({0}, {1})",
        NextPowerOfTwo => "gsync::next_power_of_two({0})",
        IsMultipleOf => "gsync::is_multiple_of({0}, {1})",
        IsPowerOfTwo => "gsync::is_power_of_two({0})",
        CountOnes => "gsync::count_ones({0})",
        LeadingZeros => "gsync::leading_zeros({0})",
        TrailingZeros => "gsync::trailing_zeros({0})",
        Ilog2 => "gsync::ilog2({0})",
        RotateLeft => "gsync::rotate_left({0}, {1})",
        RotateRight => "gsync::rotate_right({0}, {1})",
        ToF32 | ToF64 | FromF32 => half_template(f, result),
        Max3 | Min3 | MaxRelu | MinRelu | Max3Relu | Min3Relu | AddMax | AddMin | AddMaxRelu | AddMinRelu => {
            fused_int_template(f, operand == Scalar::U32)
        }
    }
}

/// The template of a fused 32-bit integer function: CUDA's DPX intrinsic, which CUDA computes
/// in software below sm_90. A signed `add_` form goes through the prelude, which keeps its sum
/// wrapping on every GPU (CUDA's software form adds `int`s, undefined in C++ on overflow).
fn fused_int_template(f: MathFn, unsigned: bool) -> &'static str {
    use MathFn::*;
    match (f, unsigned) {
        (Max3, false) => "__vimax3_s32({0}, {1}, {2})",
        (Max3, true) => "__vimax3_u32({0}, {1}, {2})",
        (Min3, false) => "__vimin3_s32({0}, {1}, {2})",
        (Min3, true) => "__vimin3_u32({0}, {1}, {2})",
        (MaxRelu, _) => "__vimax_s32_relu({0}, {1})",
        (MinRelu, _) => "__vimin_s32_relu({0}, {1})",
        (Max3Relu, _) => "__vimax3_s32_relu({0}, {1}, {2})",
        (Min3Relu, _) => "__vimin3_s32_relu({0}, {1}, {2})",
        (AddMax, false) => "gsync::add_max({0}, {1}, {2})",
        (AddMax, true) => "__viaddmax_u32({0}, {1}, {2})",
        (AddMin, false) => "gsync::add_min({0}, {1}, {2})",
        (AddMin, true) => "__viaddmin_u32({0}, {1}, {2})",
        (AddMaxRelu, _) => "gsync::add_max_relu({0}, {1}, {2})",
        (AddMinRelu, _) => "gsync::add_min_relu({0}, {1}, {2})",
        // The lowering calls no other function fused.
        _ => "gsync::fused_int_unsupported({0})",
    }
}

/// The template of a math-table call on or giving a half precision value: the helpers of
/// `core/half.cuh`, which compute in `f32` and round back as the `half` crate does.
fn half_template(f: MathFn, result: Scalar) -> &'static str {
    use MathFn::*;
    let bf16 = result == Scalar::Bf16;
    match f {
        Sqrt => "gsync::half_sqrt({0})",
        Abs => "gsync::abs({0})",
        Floor => "gsync::half_floor({0})",
        Ceil => "gsync::half_ceil({0})",
        Round => "gsync::half_round({0})",
        Trunc => "gsync::half_trunc({0})",
        Signum => "gsync::signum({0})",
        Min => "gsync::min({0}, {1})",
        Max => "gsync::max({0}, {1})",
        Clamp => "gsync::clamp({0}, {1}, {2})",
        Copysign => "gsync::half_copysign({0}, {1})",
        IsNan => "gsync::half_is_nan({0})",
        IsFinite => "gsync::half_is_finite({0})",
        IsInfinite => "gsync::half_is_infinite({0})",
        IsSignNegative => "gsync::half_is_sign_negative({0})",
        ToBits => "gsync::half_to_bits({0})",
        FromBits if bf16 => "gsync::bf16_from_bits({0})",
        FromBits => "gsync::f16_from_bits({0})",
        ToF32 => "gsync::half_to_f32({0})",
        ToF64 => "gsync::half_to_f64({0})",
        FromF32 if bf16 => "gsync::bf16_from_f32({0})",
        FromF32 => "gsync::f16_from_f32({0})",
        // The lowering offers no other method on half precision values.
        _ => "gsync::half_unsupported({0})",
    }
}

/// The prelude's helper for an atomic with its memory ordering: CUDA's relaxed `atomicAdd`
/// & co. for `Relaxed`, PTX `atom.<order>.gpu` helpers for the others.
pub fn atomic_helper(op: AtomicOp, order: MemoryOrder) -> String {
    let base = match op {
        AtomicOp::Add => "gsync::atomic_add",
        AtomicOp::Min => "gsync::atomic_min",
        AtomicOp::Max => "gsync::atomic_max",
        AtomicOp::Exch => "gsync::atomic_exch",
        AtomicOp::Cas => "gsync::atomic_cas",
        AtomicOp::Load if order == MemoryOrder::Relaxed => return "gsync::load_relaxed".to_owned(),
        AtomicOp::Load => return "gsync::load_acquire".to_owned(),
        AtomicOp::Store if order == MemoryOrder::Relaxed => return "gsync::store_relaxed".to_owned(),
        AtomicOp::Store => return "gsync::store_release".to_owned(),
        // Another GPU's memory: system scope.
        AtomicOp::Get => return "gsync::load_relaxed_sys".to_owned(),
        AtomicOp::Put => return "gsync::store_relaxed_sys".to_owned(),
        AtomicOp::Signal => return "gsync::store_release_sys".to_owned(),
        AtomicOp::LoadSignal => return "gsync::load_acquire_sys".to_owned(),
    };
    let suffix = match order {
        MemoryOrder::Relaxed => "",
        MemoryOrder::Acquire => "_acquire",
        MemoryOrder::Release => "_release",
        MemoryOrder::AcqRel => "_acq_rel",
        MemoryOrder::SeqCst => "_seq_cst",
    };
    format!("{base}{suffix}")
}

/// The prelude's helper for a warp shuffle.
pub fn shuffle_helper(op: ShuffleOp) -> &'static str {
    match op {
        ShuffleOp::Up => "gsync::shfl_up",
        ShuffleOp::Down => "gsync::shfl_down",
        ShuffleOp::Xor => "gsync::shfl_xor",
        ShuffleOp::Idx => "gsync::shfl",
    }
}
