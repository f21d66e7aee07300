//! The methods and functions of the math table, as the IR names them: by
//! what they compute, for the emitters to spell (`min` is `fminf` in CUDA
//! for `f32`, `gsync::min` for integers, `.min` in Rust).

/// A method or associated function kernels may call on scalars.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MathFn {
    Sqrt,
    Abs,
    Floor,
    Ceil,
    Round,
    Trunc,
    Exp,
    Exp2,
    Ln,
    Log2,
    Log10,
    Sin,
    Cos,
    Tan,
    Asin,
    Acos,
    Atan,
    Sinh,
    Cosh,
    Tanh,
    Cbrt,
    Recip,
    Signum,
    Min,
    Max,
    Powf,
    Atan2,
    Hypot,
    Copysign,
    Powi,
    MulAdd,
    Clamp,
    IsNan,
    IsFinite,
    IsInfinite,
    IsSignNegative,
    ToBits,
    /// `f32::from_bits(u)` / `f64::from_bits(u)`: the float type is the call's own.
    FromBits,
    WrappingAbs,
    AbsDiff,
    Pow,
    WrappingPow,
    WrappingAdd,
    WrappingSub,
    WrappingMul,
    WrappingDiv,
    WrappingRem,
    WrappingNeg,
    WrappingShl,
    WrappingShr,
    SaturatingAdd,
    SaturatingSub,
    DivCeil,
    NextPowerOfTwo,
    IsMultipleOf,
    IsPowerOfTwo,
    CountOnes,
    LeadingZeros,
    TrailingZeros,
    Ilog2,
    RotateLeft,
    RotateRight,
    /// `h.to_f32()` of a half precision value: exact.
    ToF32,
    /// `h.to_f64()` of a half precision value: exact.
    ToF64,
    /// `f16::from_f32(x)` / `bf16::from_f32(x)`: rounds to nearest even.
    FromF32,
    // The fused 32-bit integer functions, free functions only (`max3(a, b, c)`): Hopper's
    // DPX instructions. An `add_` form wraps its sum, as `+` does in kernels.
    /// `max3(a, b, c)`: `max(max(a, b), c)`.
    Max3,
    /// `min3(a, b, c)`: `min(min(a, b), c)`.
    Min3,
    /// `max_relu(a, b)`: `max(max(a, b), 0)`.
    MaxRelu,
    /// `min_relu(a, b)`: `max(min(a, b), 0)`.
    MinRelu,
    /// `max3_relu(a, b, c)`: `max(max(max(a, b), c), 0)`.
    Max3Relu,
    /// `min3_relu(a, b, c)`: `max(min(min(a, b), c), 0)`.
    Min3Relu,
    /// `add_max(a, b, c)`: `max(a + b, c)`.
    AddMax,
    /// `add_min(a, b, c)`: `min(a + b, c)`.
    AddMin,
    /// `add_max_relu(a, b, c)`: `max(max(a + b, c), 0)`.
    AddMaxRelu,
    /// `add_min_relu(a, b, c)`: `max(min(a + b, c), 0)`.
    AddMinRelu,
}

impl MathFn {
    /// Every function of the table, for lookups by name.
    pub const ALL: [MathFn; 75] = [
        MathFn::Sqrt,
        MathFn::Abs,
        MathFn::Floor,
        MathFn::Ceil,
        MathFn::Round,
        MathFn::Trunc,
        MathFn::Exp,
        MathFn::Exp2,
        MathFn::Ln,
        MathFn::Log2,
        MathFn::Log10,
        MathFn::Sin,
        MathFn::Cos,
        MathFn::Tan,
        MathFn::Asin,
        MathFn::Acos,
        MathFn::Atan,
        MathFn::Sinh,
        MathFn::Cosh,
        MathFn::Tanh,
        MathFn::Cbrt,
        MathFn::Recip,
        MathFn::Signum,
        MathFn::Min,
        MathFn::Max,
        MathFn::Powf,
        MathFn::Atan2,
        MathFn::Hypot,
        MathFn::Copysign,
        MathFn::Powi,
        MathFn::MulAdd,
        MathFn::Clamp,
        MathFn::IsNan,
        MathFn::IsFinite,
        MathFn::IsInfinite,
        MathFn::IsSignNegative,
        MathFn::ToBits,
        MathFn::FromBits,
        MathFn::WrappingAbs,
        MathFn::AbsDiff,
        MathFn::Pow,
        MathFn::WrappingPow,
        MathFn::WrappingAdd,
        MathFn::WrappingSub,
        MathFn::WrappingMul,
        MathFn::WrappingDiv,
        MathFn::WrappingRem,
        MathFn::WrappingNeg,
        MathFn::WrappingShl,
        MathFn::WrappingShr,
        MathFn::SaturatingAdd,
        MathFn::SaturatingSub,
        MathFn::DivCeil,
        MathFn::NextPowerOfTwo,
        MathFn::IsMultipleOf,
        MathFn::IsPowerOfTwo,
        MathFn::CountOnes,
        MathFn::LeadingZeros,
        MathFn::TrailingZeros,
        MathFn::Ilog2,
        MathFn::RotateLeft,
        MathFn::RotateRight,
        MathFn::ToF32,
        MathFn::ToF64,
        MathFn::FromF32,
        MathFn::Max3,
        MathFn::Min3,
        MathFn::MaxRelu,
        MathFn::MinRelu,
        MathFn::Max3Relu,
        MathFn::Min3Relu,
        MathFn::AddMax,
        MathFn::AddMin,
        MathFn::AddMaxRelu,
        MathFn::AddMinRelu,
    ];

    /// The name a kernel calls it by, which is the Rust method's (`x.min(y)`,
    /// `u32::min(x, y)`) or associated function's (`f32::from_bits(u)`).
    pub fn name(self) -> &'static str {
        match self {
            MathFn::Sqrt => "sqrt",
            MathFn::Abs => "abs",
            MathFn::Floor => "floor",
            MathFn::Ceil => "ceil",
            MathFn::Round => "round",
            MathFn::Trunc => "trunc",
            MathFn::Exp => "exp",
            MathFn::Exp2 => "exp2",
            MathFn::Ln => "ln",
            MathFn::Log2 => "log2",
            MathFn::Log10 => "log10",
            MathFn::Sin => "sin",
            MathFn::Cos => "cos",
            MathFn::Tan => "tan",
            MathFn::Asin => "asin",
            MathFn::Acos => "acos",
            MathFn::Atan => "atan",
            MathFn::Sinh => "sinh",
            MathFn::Cosh => "cosh",
            MathFn::Tanh => "tanh",
            MathFn::Cbrt => "cbrt",
            MathFn::Recip => "recip",
            MathFn::Signum => "signum",
            MathFn::Min => "min",
            MathFn::Max => "max",
            MathFn::Powf => "powf",
            MathFn::Atan2 => "atan2",
            MathFn::Hypot => "hypot",
            MathFn::Copysign => "copysign",
            MathFn::Powi => "powi",
            MathFn::MulAdd => "mul_add",
            MathFn::Clamp => "clamp",
            MathFn::IsNan => "is_nan",
            MathFn::IsFinite => "is_finite",
            MathFn::IsInfinite => "is_infinite",
            MathFn::IsSignNegative => "is_sign_negative",
            MathFn::ToBits => "to_bits",
            MathFn::FromBits => "from_bits",
            MathFn::WrappingAbs => "wrapping_abs",
            MathFn::AbsDiff => "abs_diff",
            MathFn::Pow => "pow",
            MathFn::WrappingPow => "wrapping_pow",
            MathFn::WrappingAdd => "wrapping_add",
            MathFn::WrappingSub => "wrapping_sub",
            MathFn::WrappingMul => "wrapping_mul",
            MathFn::WrappingDiv => "wrapping_div",
            MathFn::WrappingRem => "wrapping_rem",
            MathFn::WrappingNeg => "wrapping_neg",
            MathFn::WrappingShl => "wrapping_shl",
            MathFn::WrappingShr => "wrapping_shr",
            MathFn::SaturatingAdd => "saturating_add",
            MathFn::SaturatingSub => "saturating_sub",
            MathFn::DivCeil => "div_ceil",
            MathFn::NextPowerOfTwo => "next_power_of_two",
            MathFn::IsMultipleOf => "is_multiple_of",
            MathFn::IsPowerOfTwo => "is_power_of_two",
            MathFn::CountOnes => "count_ones",
            MathFn::LeadingZeros => "leading_zeros",
            MathFn::TrailingZeros => "trailing_zeros",
            MathFn::Ilog2 => "ilog2",
            MathFn::RotateLeft => "rotate_left",
            MathFn::RotateRight => "rotate_right",
            MathFn::ToF32 => "to_f32",
            MathFn::ToF64 => "to_f64",
            MathFn::FromF32 => "from_f32",
            MathFn::Max3 => "max3",
            MathFn::Min3 => "min3",
            MathFn::MaxRelu => "max_relu",
            MathFn::MinRelu => "min_relu",
            MathFn::Max3Relu => "max3_relu",
            MathFn::Min3Relu => "min3_relu",
            MathFn::AddMax => "add_max",
            MathFn::AddMin => "add_min",
            MathFn::AddMaxRelu => "add_max_relu",
            MathFn::AddMinRelu => "add_min_relu",
        }
    }

    /// Looks a function up by the name a kernel calls it by.
    pub fn from_name(name: &str) -> Option<MathFn> {
        MathFn::ALL.into_iter().find(|f| f.name() == name)
    }

    /// Whether it is one of the fused 32-bit integer functions (Hopper's DPX instructions),
    /// which kernels call as free functions of `i32` or `u32` values.
    pub fn is_fused_int(self) -> bool {
        matches!(
            self,
            MathFn::Max3
                | MathFn::Min3
                | MathFn::MaxRelu
                | MathFn::MinRelu
                | MathFn::Max3Relu
                | MathFn::Min3Relu
                | MathFn::AddMax
                | MathFn::AddMin
                | MathFn::AddMaxRelu
                | MathFn::AddMinRelu
        )
    }

    /// Whether a fused integer function clamps its result at 0 (`_relu`), which only `i32`
    /// has: on `u32` it would change nothing.
    pub fn is_relu(self) -> bool {
        matches!(
            self,
            MathFn::MaxRelu
                | MathFn::MinRelu
                | MathFn::Max3Relu
                | MathFn::Min3Relu
                | MathFn::AddMaxRelu
                | MathFn::AddMinRelu
        )
    }
}

#[cfg(test)]
mod tests {
    use super::MathFn;

    #[test]
    fn every_function_is_found_by_its_name() {
        for f in MathFn::ALL {
            assert_eq!(MathFn::from_name(f.name()), Some(f));
        }
    }
}
