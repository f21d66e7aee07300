//! Half precision operations for the Rust that `#[grid_phases]` generates (the emulator body
//! and the split form's host code), where the `half` crate has no inherent method: each
//! widens to `f32`, operates and rounds back to nearest even, as `half`'s `num_traits::Float`
//! implementation does and as the device prelude (`core/half.cuh`) does.

use half::{bf16, f16};

/// `f16` and `bf16`: the conversions the operations go through.
pub trait Half: Copy + PartialOrd {
    /// The value as `f32`, exactly.
    fn widen(self) -> f32;
    /// `value` rounded to nearest even.
    fn narrow(value: f32) -> Self;
}

impl Half for f16 {
    #[inline]
    fn widen(self) -> f32 {
        self.to_f32()
    }
    #[inline]
    fn narrow(value: f32) -> Self {
        f16::from_f32(value)
    }
}

impl Half for bf16 {
    #[inline]
    fn widen(self) -> f32 {
        self.to_f32()
    }
    #[inline]
    fn narrow(value: f32) -> Self {
        bf16::from_f32(value)
    }
}

/// `x.sqrt()`: correctly rounded.
pub fn sqrt<H: Half>(x: H) -> H {
    H::narrow(x.widen().sqrt())
}
/// `x.abs()`.
pub fn abs<H: Half>(x: H) -> H {
    H::narrow(x.widen().abs())
}
/// `x.floor()`.
pub fn floor<H: Half>(x: H) -> H {
    H::narrow(x.widen().floor())
}
/// `x.ceil()`.
pub fn ceil<H: Half>(x: H) -> H {
    H::narrow(x.widen().ceil())
}
/// `x.round()`: half-way cases away from zero.
pub fn round<H: Half>(x: H) -> H {
    H::narrow(x.widen().round())
}
/// `x.trunc()`.
pub fn trunc<H: Half>(x: H) -> H {
    H::narrow(x.widen().trunc())
}
/// `x.clamp(lo, hi)` as the `half` crate computes it, without its panic when `lo > hi` or a
/// bound is NaN: raised to `lo`, then lowered to `hi`.
pub fn clamp<H: Half>(x: H, lo: H, hi: H) -> H {
    let mut x = x;
    if x < lo {
        x = lo;
    }
    if x > hi {
        x = hi;
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operations_round_back_to_the_type() {
        assert_eq!(sqrt(f16::from_f32(2.0)), f16::from_f32(std::f32::consts::SQRT_2));
        assert_eq!(abs(bf16::from_f32(-3.5)), bf16::from_f32(3.5));
        assert_eq!(round(f16::from_f32(2.5)), f16::from_f32(3.0));
        assert_eq!(floor(bf16::from_f32(-0.5)), bf16::from_f32(-1.0));
        assert_eq!(clamp(f16::ONE, f16::from_f32(2.0), f16::ZERO), f16::ZERO, "lo > hi: hi wins");
        assert!(clamp(f16::NAN, f16::ZERO, f16::ONE).is_nan());
    }
}
