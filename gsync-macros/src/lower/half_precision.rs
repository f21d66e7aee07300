//! Half precision, `f16` and `bf16`, as the `half` crate spells it: which methods, associated
//! functions and constants kernels may use, and the errors for the Rust that has no half
//! precision meaning (`as` casts, float literals, `from_f64`).
//!
//! The `half` crate computes `+ - * / %` and `sqrt` by widening to `f32`, operating and
//! rounding back to nearest even; so do the device and the emulator. For `+ - * /` and
//! `sqrt` that is also the correctly rounded half precision result (f32 has more than
//! 2p + 2 bits of precision for p = 11 and p = 8).

use super::method_sig::{ArgTy, MethodSig, RetTy};
use crate::ir::ConstValue;
use crate::ir::{MathFn, Scalar};

/// The methods of a half precision receiver: the `half` crate's own (`to_f32`, `min`,
/// `is_nan`, …) and the `f32` methods whose result rounds back exactly (`sqrt`, `abs`,
/// `floor`, …), which `half` offers through `num_traits::Float`.
pub fn method(f: MathFn, recv: Scalar) -> Option<MethodSig> {
    use ArgTy::Same as S;
    use MathFn::*;
    let (args, ret): (&[ArgTy], RetTy) = match f {
        Sqrt | Abs | Floor | Ceil | Round | Trunc | Signum => (&[S], RetTy::Same),
        Min | Max | Copysign => (&[S, S], RetTy::Same),
        Clamp => (&[S, S, S], RetTy::Same),
        IsNan | IsFinite | IsInfinite | IsSignNegative => (&[S], RetTy::Scalar(Scalar::Bool)),
        ToBits => (&[S], RetTy::Scalar(Scalar::U16)),
        ToF32 => (&[S], RetTy::Scalar(Scalar::F32)),
        ToF64 => (&[S], RetTy::Scalar(Scalar::F64)),
        _ => return None,
    };
    debug_assert!(recv.is_half());
    Some(MethodSig { func: f, args: args.to_vec(), ret })
}

/// `f16::from_f32(x)`, `f16::from_bits(b)` and the other associated functions that build a
/// half precision value, or why a form is refused.
pub fn constructor(ty: Scalar, name: &str) -> Result<Option<MethodSig>, String> {
    let t = ty.name();
    let sig = |func, arg| Some(MethodSig { func, args: vec![ArgTy::Scalar(arg)], ret: RetTy::Scalar(ty) });
    match name {
        "from_f32" | "from_f32_const" => Ok(sig(MathFn::FromF32, Scalar::F32)),
        "from_bits" => Ok(sig(MathFn::FromBits, Scalar::U16)),
        "from_f64" | "from_f64_const" => Err(format!(
            "`{t}::{name}` is not available in kernels: the `half` crate rounds it differently on different hosts (through `f32` where the CPU has F16C, else after dropping the low 32 bits of the `f64`), so no GPU conversion can match it; convert through `f32` instead: `{t}::from_f32(x as f32)`"
        )),
        _ => Ok(None),
    }
}

/// The message for an `as` cast to or from a half precision type, which Rust does not have.
pub fn cast_error(from: impl Into<Option<Scalar>>, to: Scalar) -> String {
    let from = from.into();
    if to.is_half() {
        let t = to.name();
        format!("`as` does not convert to `{t}` (it is not a primitive type): write `{t}::from_f32(x)`, with `x as f32` first for other types, or `{t}::from_bits(b)`")
    } else {
        let f = from.map_or("f16", Scalar::name);
        format!("`as` does not convert from `{f}` (it is not a primitive type): write `x.to_f32()` or `x.to_f64()`, then `as {}` for other types", to.name())
    }
}

/// The message for a float literal where a half precision value is needed.
pub fn literal_error(ty: Scalar) -> String {
    let t = ty.name();
    format!(
        "a float literal cannot be `{t}` (Rust has no `{t}` literals): write `{t}::from_f32(1.5)`, or a constant such as `{t}::ONE`"
    )
}

/// `f16::MAX`, `bf16::PI`, …: the `half` crate's associated constants, exactly.
pub fn associated_const(ty: Scalar, name: &str) -> Option<(ConstValue, Scalar)> {
    macro_rules! pick {
        ($t:ident) => {{
            use ::half::$t as H;
            let float = match name {
                "ZERO" => H::ZERO,
                "ONE" => H::ONE,
                "NEG_ZERO" => H::NEG_ZERO,
                "NEG_ONE" => H::NEG_ONE,
                "MAX" => H::MAX,
                "MIN" => H::MIN,
                "MIN_POSITIVE" => H::MIN_POSITIVE,
                "MIN_POSITIVE_SUBNORMAL" => H::MIN_POSITIVE_SUBNORMAL,
                "MAX_SUBNORMAL" => H::MAX_SUBNORMAL,
                "EPSILON" => H::EPSILON,
                "INFINITY" => H::INFINITY,
                "NEG_INFINITY" => H::NEG_INFINITY,
                "NAN" => H::NAN,
                "E" => H::E,
                "PI" => H::PI,
                "FRAC_1_PI" => H::FRAC_1_PI,
                "FRAC_1_SQRT_2" => H::FRAC_1_SQRT_2,
                "FRAC_2_PI" => H::FRAC_2_PI,
                "FRAC_2_SQRT_PI" => H::FRAC_2_SQRT_PI,
                "FRAC_PI_2" => H::FRAC_PI_2,
                "FRAC_PI_3" => H::FRAC_PI_3,
                "FRAC_PI_4" => H::FRAC_PI_4,
                "FRAC_PI_6" => H::FRAC_PI_6,
                "FRAC_PI_8" => H::FRAC_PI_8,
                "LN_10" => H::LN_10,
                "LN_2" => H::LN_2,
                "LOG10_E" => H::LOG10_E,
                "LOG10_2" => H::LOG10_2,
                "LOG2_E" => H::LOG2_E,
                "LOG2_10" => H::LOG2_10,
                "SQRT_2" => H::SQRT_2,
                "DIGITS" => return Some((ConstValue::Int(H::DIGITS.into()), Scalar::U32)),
                "MANTISSA_DIGITS" => return Some((ConstValue::Int(H::MANTISSA_DIGITS.into()), Scalar::U32)),
                "RADIX" => return Some((ConstValue::Int(H::RADIX.into()), Scalar::U32)),
                "MAX_EXP" => return Some((ConstValue::Int(H::MAX_EXP.into()), Scalar::I32)),
                "MIN_EXP" => return Some((ConstValue::Int(H::MIN_EXP.into()), Scalar::I32)),
                "MAX_10_EXP" => return Some((ConstValue::Int(H::MAX_10_EXP.into()), Scalar::I32)),
                "MIN_10_EXP" => return Some((ConstValue::Int(H::MIN_10_EXP.into()), Scalar::I32)),
                _ => return None,
            };
            Some((ConstValue::Float(float.to_f64()), ty))
        }};
    }
    match ty {
        Scalar::F16 => pick!(f16),
        Scalar::Bf16 => pick!(bf16),
        _ => None,
    }
}

/// A constant's value rounded to `ty` as the `half` crate rounds an `f32`: the value of
/// `f16::from_f32_const(x)` in a `const`.
pub fn round_from_f32(value: f32, ty: Scalar) -> f64 {
    match ty {
        Scalar::F16 => ::half::f16::from_f32_const(value).to_f64_const(),
        _ => ::half::bf16::from_f32_const(value).to_f64_const(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::half_bits as bits;

    #[test]
    fn constants_and_bits_round_trip_exactly() {
        for ty in [Scalar::F16, Scalar::Bf16] {
            for name in ["MAX", "MIN", "MIN_POSITIVE_SUBNORMAL", "NEG_ZERO", "PI", "INFINITY", "NAN"] {
                let (ConstValue::Float(v), t) = associated_const(ty, name).expect(name) else { panic!("{name}") };
                assert_eq!(t, ty);
                let expected = match (ty, name) {
                    (Scalar::F16, "MAX") => 0x7bff,
                    (Scalar::F16, "NAN") => 0x7e00,
                    (Scalar::F16, "NEG_ZERO") => 0x8000,
                    (Scalar::Bf16, "NAN") => 0x7fc0,
                    (Scalar::Bf16, "MIN_POSITIVE_SUBNORMAL") => 0x0001,
                    _ => bits(v, ty),
                };
                assert_eq!(bits(v, ty), expected, "{} {name}", ty.name());
            }
        }
        assert_eq!(round_from_f32(1.0 + f32::EPSILON, Scalar::F16), 1.0, "rounds to nearest even");
    }
}
