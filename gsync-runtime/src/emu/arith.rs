//! The DSL's meaning of the operations where Rust would panic, and the fused integer
//! functions Rust lacks (`max3`, `add_max`, …), for the Rust that `#[grid_phases]` generates:
//! the emulator body and the host code of a split kernel. The same values the device prelude
//! and CUDA's intrinsics compute, so that host, emulator and device agree.

/// Integer operations with the DSL's results where Rust's panic.
pub trait DslInt: Copy + PartialOrd {
    /// `a / b`; 0 when `b == 0`, wrapping on `MIN / -1`.
    fn dsl_div(self, b: Self) -> Self;
    /// `a % b`; 0 when `b == 0` or on `MIN % -1`.
    fn dsl_rem(self, b: Self) -> Self;
    /// Rounded-up division; 0 when `b == 0`.
    fn dsl_div_ceil(self, b: Self) -> Self;
    /// The next power of two; 0 where Rust would overflow.
    fn dsl_next_power_of_two(self) -> Self;
    /// The base-2 logarithm; 0 for 0 (and negative values).
    fn dsl_ilog2(self) -> u32;
}

macro_rules! dsl_int {
    ($($t:ty),*) => {$(
        impl DslInt for $t {
            fn dsl_div(self, b: Self) -> Self {
                if b == 0 { 0 } else { self.wrapping_div(b) }
            }
            fn dsl_rem(self, b: Self) -> Self {
                if b == 0 { 0 } else { self.wrapping_rem(b) }
            }
            fn dsl_div_ceil(self, b: Self) -> Self {
                let q = self.dsl_div(b);
                if self.dsl_rem(b) != 0 { q.wrapping_add(1) } else { q }
            }
            #[allow(unused_comparisons)]
            fn dsl_next_power_of_two(self) -> Self {
                if self <= 1 { return 1; }
                let shift = <$t>::BITS - (self - 1).leading_zeros();
                if shift >= <$t>::BITS { 0 } else { (1 as $t).wrapping_shl(shift) }
            }
            #[allow(unused_comparisons)]
            fn dsl_ilog2(self) -> u32 {
                if self <= 0 { 0 } else { self.ilog2() }
            }
        }
    )*};
}
dsl_int!(u8, i8, u16, i16, u32, i32, u64, i64, usize);

/// `a / b` with the DSL's meaning.
pub fn div<T: DslInt>(a: T, b: T) -> T {
    a.dsl_div(b)
}
/// `a % b` with the DSL's meaning.
pub fn rem<T: DslInt>(a: T, b: T) -> T {
    a.dsl_rem(b)
}
/// `a.wrapping_div(b)` with the DSL's meaning.
pub fn wrapping_div<T: DslInt>(a: T, b: T) -> T {
    a.dsl_div(b)
}
/// `a.wrapping_rem(b)` with the DSL's meaning.
pub fn wrapping_rem<T: DslInt>(a: T, b: T) -> T {
    a.dsl_rem(b)
}
/// `a.div_ceil(b)` with the DSL's meaning.
pub fn div_ceil<T: DslInt>(a: T, b: T) -> T {
    a.dsl_div_ceil(b)
}
/// `a.next_power_of_two()` with the DSL's meaning.
pub fn next_power_of_two<T: DslInt>(a: T) -> T {
    a.dsl_next_power_of_two()
}
/// `a.ilog2()` with the DSL's meaning.
pub fn ilog2<T: DslInt>(a: T) -> u32 {
    a.dsl_ilog2()
}
/// `x.clamp(lo, hi)` without Rust's panic on `lo > hi`; NaN stays NaN.
pub fn clamp<T: PartialOrd>(x: T, lo: T, hi: T) -> T {
    if x < lo {
        lo
    } else if x > hi {
        hi
    } else {
        x
    }
}

/// The 32-bit integers of the fused functions (Hopper's DPX instructions): `i32` and `u32`.
pub trait FusedInt: Copy + Ord {
    /// `a + b`, wrapping at 32 bits as the GPU's `add.s32`/`add.u32` does.
    fn wrapping_sum(self, b: Self) -> Self;
}

impl FusedInt for i32 {
    fn wrapping_sum(self, b: Self) -> Self {
        self.wrapping_add(b)
    }
}

impl FusedInt for u32 {
    fn wrapping_sum(self, b: Self) -> Self {
        self.wrapping_add(b)
    }
}

/// `max3(a, b, c)`: the largest of three (`__vimax3_s32`/`_u32`).
pub fn max3<T: FusedInt>(a: T, b: T, c: T) -> T {
    a.max(b).max(c)
}
/// `min3(a, b, c)`: the smallest of three (`__vimin3_s32`/`_u32`).
pub fn min3<T: FusedInt>(a: T, b: T, c: T) -> T {
    a.min(b).min(c)
}
/// `max_relu(a, b)`: the larger of two, or 0 if that is negative (`__vimax_s32_relu`).
pub fn max_relu(a: i32, b: i32) -> i32 {
    a.max(b).max(0)
}
/// `min_relu(a, b)`: the smaller of two, or 0 if that is negative (`__vimin_s32_relu`).
pub fn min_relu(a: i32, b: i32) -> i32 {
    a.min(b).max(0)
}
/// `max3_relu(a, b, c)`: the largest of three, or 0 if that is negative (`__vimax3_s32_relu`).
pub fn max3_relu(a: i32, b: i32, c: i32) -> i32 {
    a.max(b).max(c).max(0)
}
/// `min3_relu(a, b, c)`: the smallest of three, or 0 if that is negative (`__vimin3_s32_relu`).
pub fn min3_relu(a: i32, b: i32, c: i32) -> i32 {
    a.min(b).min(c).max(0)
}
/// `add_max(a, b, c)`: `max(a + b, c)`, the sum wrapping (`__viaddmax_s32`/`_u32`).
pub fn add_max<T: FusedInt>(a: T, b: T, c: T) -> T {
    a.wrapping_sum(b).max(c)
}
/// `add_min(a, b, c)`: `min(a + b, c)`, the sum wrapping (`__viaddmin_s32`/`_u32`).
pub fn add_min<T: FusedInt>(a: T, b: T, c: T) -> T {
    a.wrapping_sum(b).min(c)
}
/// `add_max_relu(a, b, c)`: `max(max(a + b, c), 0)`, the sum wrapping (`__viaddmax_s32_relu`).
pub fn add_max_relu(a: i32, b: i32, c: i32) -> i32 {
    a.wrapping_add(b).max(c).max(0)
}
/// `add_min_relu(a, b, c)`: `max(min(a + b, c), 0)`, the sum wrapping (`__viaddmin_s32_relu`).
pub fn add_min_relu(a: i32, b: i32, c: i32) -> i32 {
    a.wrapping_add(b).min(c).max(0)
}

/// `range.step_by(step)`, except that a zero step, where Rust would panic, yields nothing
/// (the caller records the fault first).
pub fn step_by<I: Iterator>(range: I, step: usize) -> impl Iterator<Item = I::Item> {
    (step != 0).then(|| range.step_by(step)).into_iter().flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn division_by_zero_and_overflow_have_values() {
        assert_eq!(div(7u32, 0), 0);
        assert_eq!(rem(7i32, 0), 0);
        assert_eq!(div(i32::MIN, -1), i32::MIN);
        assert_eq!(rem(i32::MIN, -1), 0);
        assert_eq!(div_ceil(7u8, 2), 4);
    }

    #[test]
    fn powers_and_logs_do_not_panic() {
        assert_eq!(next_power_of_two(5u32), 8);
        assert_eq!(next_power_of_two(u32::MAX), 0);
        assert_eq!(ilog2(0u64), 0);
        assert_eq!(ilog2(1024u64), 10);
        assert_eq!(clamp(5, 10, 1), 10);
    }

    #[test]
    fn fused_sums_wrap_at_32_bits_before_the_max_or_min() {
        assert_eq!(add_max(i32::MAX, 1, 0), 0, "MAX + 1 wraps to MIN, below 0");
        assert_eq!(add_min(i32::MAX, 1, 0), i32::MIN);
        assert_eq!(add_max(i32::MIN, -1, -5), i32::MAX, "MIN - 1 wraps to MAX");
        assert_eq!(add_max(u32::MAX, 2, 0), 1);
        assert_eq!(add_min(u32::MAX, 1, 7), 0);
        assert_eq!(add_max_relu(i32::MAX, 1, -3), 0);
        assert_eq!(add_min_relu(i32::MIN, -1, i32::MAX), i32::MAX);
    }

    #[test]
    fn relu_forms_clamp_at_zero_after_the_max_or_min() {
        assert_eq!(max_relu(-4, -2), 0);
        assert_eq!(min_relu(5, -1), 0);
        assert_eq!(min_relu(5, 3), 3);
        assert_eq!(max3_relu(i32::MIN, -1, -7), 0);
        assert_eq!(min3_relu(9, 4, 6), 4);
        assert_eq!(max3(1u32, u32::MAX, 0), u32::MAX);
        assert_eq!(min3(0i32, i32::MIN, -1), i32::MIN);
    }
}
