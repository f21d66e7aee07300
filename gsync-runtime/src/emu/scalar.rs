//! The values emulated threads share: buffer elements, each in an atomic cell of its width,
//! and the values a warp shuffle moves between lanes.

use std::sync::atomic::Ordering::{self, Acquire, Relaxed, Release};
use std::sync::atomic::{
    AtomicBool, AtomicI16, AtomicI32, AtomicI64, AtomicI8, AtomicU16, AtomicU32, AtomicU64, AtomicU8, AtomicUsize,
};

mod sealed {
    /// Keeps the emulator's value traits to the types the runtime implements them for.
    pub trait Sealed {}
}

/// The types of device buffers (`u8 i8 u16 i16 u32 i32 u64 i64 f32 f64 f16 bf16`) and of
/// arrays (those, `usize` and `bool`), with their atomic storage: integers (`usize` too, 64
/// bits on the device and on the 64-bit hosts the emulator runs on) in the atomic integer of
/// their type, `bool` in an `AtomicBool`, floats (half precision too) as their bits in the
/// unsigned atomic of their width. Plain accesses are relaxed, like plain global memory
/// accesses on a GPU, and barriers order them; atomics take the ordering the kernel names
/// (`Relaxed` unless it names one), acquire loads and release stores theirs. Float min and max
/// are Rust's (a NaN operand yields the other one), with -0.0 below +0.0, so that the result
/// is one operand bit for bit, as the device's. `bool`, on which the DSL has no atomics, orders
/// `false` below `true` and adds as C's `b += v` does (an or). Sealed: every cell holds its
/// value's bits as they are, in memory of the value's size, which lets an emulated buffer take
/// a host vector over without a copy.
pub trait EmuScalar: sealed::Sealed + Copy + Default + Send + Sync + 'static {
    /// The atomic that stores one element.
    type Cell: Send + Sync;

    /// A cell holding `self`.
    fn cell(self) -> Self::Cell;
    /// The cell's value.
    fn get(cell: &Self::Cell) -> Self;
    /// Overwrites the cell's value.
    fn set(cell: &Self::Cell, value: Self);
    /// The cell's value, read with acquire ordering.
    fn get_acquire(cell: &Self::Cell) -> Self;
    /// Overwrites the cell's value with release ordering.
    fn set_release(cell: &Self::Cell, value: Self);
    /// Adds `value` (wrapping for integers), returning the old value.
    fn fetch_add(cell: &Self::Cell, value: Self, order: Ordering) -> Self;
    /// Stores the smaller of the value and `value`, returning the old value.
    fn fetch_min(cell: &Self::Cell, value: Self, order: Ordering) -> Self;
    /// Stores the larger of the value and `value`, returning the old value.
    fn fetch_max(cell: &Self::Cell, value: Self, order: Ordering) -> Self;
    /// Stores `value`, returning the old value.
    fn swap(cell: &Self::Cell, value: Self, order: Ordering) -> Self;
    /// Stores `new` if the value is `expected` (floats: bit for bit), returning the old value.
    /// A failed comparison reads with `order`'s load part.
    fn compare_swap(cell: &Self::Cell, expected: Self, new: Self, order: Ordering) -> Self;
    /// A value that differs from `self` in every bit: what an async copy's target holds on the
    /// emulator while the copy is in flight.
    fn complement(self) -> Self;
    /// Whether `self` and `other` hold the same bits (floats: `-0.0` is not `0.0`, a NaN is
    /// itself).
    fn same_bits(self, other: Self) -> bool;
}

macro_rules! integer_scalars {
    ($($ty:ty => $cell:ty),* $(,)?) => {$(
        impl sealed::Sealed for $ty {}
        impl EmuScalar for $ty {
            type Cell = $cell;

            #[inline]
            fn cell(self) -> $cell {
                <$cell>::new(self)
            }
            #[inline]
            fn get(cell: &$cell) -> $ty {
                cell.load(Relaxed)
            }
            #[inline]
            fn set(cell: &$cell, value: $ty) {
                cell.store(value, Relaxed)
            }
            #[inline]
            fn get_acquire(cell: &$cell) -> $ty {
                cell.load(Acquire)
            }
            #[inline]
            fn set_release(cell: &$cell, value: $ty) {
                cell.store(value, Release)
            }
            #[inline]
            fn fetch_add(cell: &$cell, value: $ty, order: Ordering) -> $ty {
                cell.fetch_add(value, order)
            }
            #[inline]
            fn fetch_min(cell: &$cell, value: $ty, order: Ordering) -> $ty {
                cell.fetch_min(value, order)
            }
            #[inline]
            fn fetch_max(cell: &$cell, value: $ty, order: Ordering) -> $ty {
                cell.fetch_max(value, order)
            }
            #[inline]
            fn swap(cell: &$cell, value: $ty, order: Ordering) -> $ty {
                cell.swap(value, order)
            }
            #[inline]
            fn compare_swap(cell: &$cell, expected: $ty, new: $ty, order: Ordering) -> $ty {
                cell.compare_exchange(expected, new, order, failure_order(order)).unwrap_or_else(|old| old)
            }
            #[inline]
            fn complement(self) -> $ty {
                !self
            }
            #[inline]
            fn same_bits(self, other: $ty) -> bool {
                self == other
            }
        }
    )*};
}

integer_scalars!(
    u8 => AtomicU8, i8 => AtomicI8, u16 => AtomicU16, i16 => AtomicI16,
    u32 => AtomicU32, i32 => AtomicI32, u64 => AtomicU64, i64 => AtomicI64, usize => AtomicUsize,
);

impl EmuScalar for bool {
    type Cell = AtomicBool;

    #[inline]
    fn cell(self) -> AtomicBool {
        AtomicBool::new(self)
    }
    #[inline]
    fn get(cell: &AtomicBool) -> bool {
        cell.load(Relaxed)
    }
    #[inline]
    fn set(cell: &AtomicBool, value: bool) {
        cell.store(value, Relaxed)
    }
    #[inline]
    fn get_acquire(cell: &AtomicBool) -> bool {
        cell.load(Acquire)
    }
    #[inline]
    fn set_release(cell: &AtomicBool, value: bool) {
        cell.store(value, Release)
    }
    #[inline]
    fn fetch_add(cell: &AtomicBool, value: bool, order: Ordering) -> bool {
        cell.fetch_or(value, order)
    }
    #[inline]
    fn fetch_min(cell: &AtomicBool, value: bool, order: Ordering) -> bool {
        cell.fetch_and(value, order)
    }
    #[inline]
    fn fetch_max(cell: &AtomicBool, value: bool, order: Ordering) -> bool {
        cell.fetch_or(value, order)
    }
    #[inline]
    fn swap(cell: &AtomicBool, value: bool, order: Ordering) -> bool {
        cell.swap(value, order)
    }
    #[inline]
    fn compare_swap(cell: &AtomicBool, expected: bool, new: bool, order: Ordering) -> bool {
        cell.compare_exchange(expected, new, order, failure_order(order)).unwrap_or_else(|old| old)
    }
    #[inline]
    fn complement(self) -> bool {
        !self
    }
    #[inline]
    fn same_bits(self, other: bool) -> bool {
        self == other
    }
}

macro_rules! float_scalars {
    ($($ty:ty => $cell:ty),* $(,)?) => {$(
        impl sealed::Sealed for $ty {}
        impl EmuScalar for $ty {
            type Cell = $cell;

            #[inline]
            fn cell(self) -> $cell {
                <$cell>::new(self.to_bits())
            }
            #[inline]
            fn get(cell: &$cell) -> $ty {
                <$ty>::from_bits(cell.load(Relaxed))
            }
            #[inline]
            fn set(cell: &$cell, value: $ty) {
                cell.store(value.to_bits(), Relaxed)
            }
            #[inline]
            fn get_acquire(cell: &$cell) -> $ty {
                <$ty>::from_bits(cell.load(Acquire))
            }
            #[inline]
            fn set_release(cell: &$cell, value: $ty) {
                cell.store(value.to_bits(), Release)
            }
            #[inline]
            fn fetch_add(cell: &$cell, value: $ty, order: Ordering) -> $ty {
                update::<$ty>(cell, order, |old| old + value)
            }
            #[inline]
            fn fetch_min(cell: &$cell, value: $ty, order: Ordering) -> $ty {
                update::<$ty>(cell, order, |old| {
                    if value.is_nan() {
                        old
                    } else if old.is_nan() {
                        value
                    } else if value < old || (value == old && value.is_sign_negative() && !old.is_sign_negative()) {
                        value
                    } else {
                        old
                    }
                })
            }
            #[inline]
            fn fetch_max(cell: &$cell, value: $ty, order: Ordering) -> $ty {
                update::<$ty>(cell, order, |old| {
                    if value.is_nan() {
                        old
                    } else if old.is_nan() {
                        value
                    } else if old < value || (value == old && old.is_sign_negative() && !value.is_sign_negative()) {
                        value
                    } else {
                        old
                    }
                })
            }
            #[inline]
            fn swap(cell: &$cell, value: $ty, order: Ordering) -> $ty {
                <$ty>::from_bits(cell.swap(value.to_bits(), order))
            }
            #[inline]
            fn compare_swap(cell: &$cell, expected: $ty, new: $ty, order: Ordering) -> $ty {
                let exchanged = cell.compare_exchange(expected.to_bits(), new.to_bits(), order, failure_order(order));
                <$ty>::from_bits(exchanged.unwrap_or_else(|old| old))
            }
            #[inline]
            fn complement(self) -> $ty {
                <$ty>::from_bits(!self.to_bits())
            }
            #[inline]
            fn same_bits(self, other: $ty) -> bool {
                self.to_bits() == other.to_bits()
            }
        }
    )*};
}

float_scalars!(f32 => AtomicU32, f64 => AtomicU64, half::f16 => AtomicU16, half::bf16 => AtomicU16);

/// The ordering of a compare-and-swap that fails: its success ordering without a release
/// part, which a failed exchange, writing nothing, cannot have.
fn failure_order(order: Ordering) -> Ordering {
    match order {
        Release | Relaxed => Relaxed,
        Ordering::AcqRel | Acquire => Acquire,
        _ => Ordering::SeqCst,
    }
}

/// A read-modify-write of a float stored as bits, by compare-and-swap loop as on a GPU;
/// returns the old value.
#[inline]
fn update<F: Float>(cell: &F::Cell, order: Ordering, op: impl Fn(F) -> F) -> F {
    let mut old = F::get(cell);
    loop {
        match F::exchange_bits(cell, old, op(old), order) {
            Ok(()) => return old,
            Err(current) => old = current,
        }
    }
}

/// The float types' bit-level compare-and-swap, for [`update`].
trait Float: EmuScalar {
    /// Stores `new` if the cell holds `old` bit for bit; else returns what it holds.
    fn exchange_bits(cell: &Self::Cell, old: Self, new: Self, order: Ordering) -> Result<(), Self>;
}

impl Float for f32 {
    #[inline]
    fn exchange_bits(cell: &AtomicU32, old: f32, new: f32, order: Ordering) -> Result<(), f32> {
        let exchanged = cell.compare_exchange_weak(old.to_bits(), new.to_bits(), order, failure_order(order));
        exchanged.map(drop).map_err(f32::from_bits)
    }
}

impl Float for f64 {
    #[inline]
    fn exchange_bits(cell: &AtomicU64, old: f64, new: f64, order: Ordering) -> Result<(), f64> {
        let exchanged = cell.compare_exchange_weak(old.to_bits(), new.to_bits(), order, failure_order(order));
        exchanged.map(drop).map_err(f64::from_bits)
    }
}

macro_rules! half_floats {
    ($($ty:ty),* $(,)?) => {$(
        impl Float for $ty {
            #[inline]
            fn exchange_bits(cell: &AtomicU16, old: $ty, new: $ty, order: Ordering) -> Result<(), $ty> {
                let exchanged = cell.compare_exchange_weak(old.to_bits(), new.to_bits(), order, failure_order(order));
                exchanged.map(drop).map_err(<$ty>::from_bits)
            }
        }

        impl ShuffleScalar for $ty {
            #[inline]
            fn to_lane_bits(self) -> u64 {
                u64::from(self.to_bits())
            }
            #[inline]
            fn from_lane_bits(bits: u64) -> $ty {
                <$ty>::from_bits(bits as u16)
            }
        }
    )*};
}

// Half precision adds as the `half` crate does: in f32, rounded back to nearest even.
half_floats!(half::f16, half::bf16);

/// A value a warp shuffle can move: the twelve buffer element types, `bool` and `usize`. Sealed.
pub trait ShuffleScalar: sealed::Sealed + Copy + Send + Sync + 'static {
    /// The value's bits, zero-extended to 64.
    fn to_lane_bits(self) -> u64;
    /// The value whose [`to_lane_bits`](Self::to_lane_bits) gave `bits`.
    fn from_lane_bits(bits: u64) -> Self;
}

macro_rules! shuffle_integers {
    ($($ty:ty => $unsigned:ty),* $(,)?) => {$(
        impl ShuffleScalar for $ty {
            #[inline]
            fn to_lane_bits(self) -> u64 {
                // Through the unsigned type of the same width: zero-extended, not sign-extended.
                u64::from(self as $unsigned)
            }
            #[inline]
            fn from_lane_bits(bits: u64) -> $ty {
                bits as $ty
            }
        }
    )*};
}

shuffle_integers!(u8 => u8, i8 => u8, u16 => u16, i16 => u16, u32 => u32, i32 => u32, u64 => u64, i64 => u64);

impl sealed::Sealed for bool {}

impl ShuffleScalar for usize {
    #[inline]
    fn to_lane_bits(self) -> u64 {
        // The device's usize is 64 bits whatever the host's width.
        self as u64
    }
    #[inline]
    fn from_lane_bits(bits: u64) -> usize {
        bits as usize
    }
}

impl ShuffleScalar for bool {
    #[inline]
    fn to_lane_bits(self) -> u64 {
        u64::from(self)
    }
    #[inline]
    fn from_lane_bits(bits: u64) -> bool {
        bits != 0
    }
}

impl ShuffleScalar for f32 {
    #[inline]
    fn to_lane_bits(self) -> u64 {
        u64::from(self.to_bits())
    }
    #[inline]
    fn from_lane_bits(bits: u64) -> f32 {
        f32::from_bits(bits as u32)
    }
}

impl ShuffleScalar for f64 {
    #[inline]
    fn to_lane_bits(self) -> u64 {
        self.to_bits()
    }
    #[inline]
    fn from_lane_bits(bits: u64) -> f64 {
        f64::from_bits(bits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_adds_wrap_and_return_the_old_value() {
        let cell = 250u8.cell();
        assert_eq!(u8::fetch_add(&cell, 10, Relaxed), 250);
        assert_eq!(u8::get(&cell), 4);
        let cell = i16::MAX.cell();
        assert_eq!(i16::fetch_add(&cell, 1, Relaxed), i16::MAX);
        assert_eq!(i16::get(&cell), i16::MIN);
    }

    #[test]
    fn float_min_and_max_skip_nan_and_order_signed_zeros_as_the_device_does() {
        let cell = f32::NAN.cell();
        assert!(f32::fetch_max(&cell, 2.0, Relaxed).is_nan(), "the old value comes back");
        assert_eq!(f32::get(&cell), 2.0, "a NaN element yields to a number");
        assert_eq!(f32::fetch_max(&cell, f32::NAN, Relaxed), 2.0);
        assert_eq!(f32::get(&cell), 2.0, "a NaN operand changes nothing");
        let cell = (-0.0f64).cell();
        f64::fetch_max(&cell, 0.0, Relaxed);
        assert_eq!(f64::get(&cell).to_bits(), 0.0f64.to_bits(), "+0.0 is above -0.0");
        f64::fetch_min(&cell, -0.0, Relaxed);
        assert_eq!(f64::get(&cell).to_bits(), (-0.0f64).to_bits(), "-0.0 is below +0.0");
        f64::fetch_max(&cell, -0.0, Relaxed);
        assert_eq!(f64::get(&cell).to_bits(), (-0.0f64).to_bits(), "equal values keep the element");
        let cell = 1.0f32.cell();
        assert_eq!(f32::fetch_min(&cell, -3.5, Relaxed), 1.0);
        assert_eq!(f32::get(&cell), -3.5);
    }

    #[test]
    fn signed_min_and_max_compare_as_signed() {
        let cell = 3i32.cell();
        assert_eq!(i32::fetch_min(&cell, -5, Relaxed), 3);
        assert_eq!(i32::fetch_max(&cell, -7, Relaxed), -5);
        assert_eq!(i32::get(&cell), -5);
        let cell = (-1i8).cell();
        assert_eq!(i8::fetch_max(&cell, 1, Relaxed), -1);
        assert_eq!(i8::get(&cell), 1);
    }

    #[test]
    fn floats_add_min_max_and_swap_through_their_bits() {
        let cell = 1.5f32.cell();
        assert_eq!(f32::fetch_add(&cell, 2.25, Relaxed), 1.5);
        assert_eq!(f32::fetch_min(&cell, -1.0, Relaxed), 3.75);
        assert_eq!(f32::fetch_max(&cell, 0.5, Relaxed), -1.0);
        assert_eq!(f32::swap(&cell, 8.0, Relaxed), 0.5);
        assert_eq!(f32::get(&cell), 8.0);
        let cell = (-0.0f64).cell();
        assert_eq!(
            f64::compare_swap(&cell, 0.0, 1.0, Relaxed).to_bits(),
            (-0.0f64).to_bits(),
            "-0.0 is not 0.0 bitwise"
        );
        assert_eq!(f64::compare_swap(&cell, -0.0, 1.0, Relaxed).to_bits(), (-0.0f64).to_bits());
        assert_eq!(f64::get(&cell), 1.0);
    }

    #[test]
    fn usize_is_a_wrapping_integer_and_bool_orders_false_below_true() {
        let cell = usize::MAX.cell();
        assert_eq!(usize::fetch_add(&cell, 2, Relaxed), usize::MAX);
        assert_eq!(usize::get(&cell), 1);
        assert_eq!(usize::fetch_max(&cell, 1 << 40, Relaxed), 1);
        assert_eq!(usize::get(&cell), 1 << 40);
        let cell = true.cell();
        assert!(bool::fetch_min(&cell, false, Relaxed));
        assert!(!bool::get(&cell));
        assert!(!bool::fetch_max(&cell, true, Relaxed));
        assert!(bool::fetch_add(&cell, true, Relaxed));
        assert!(bool::get(&cell), "true + true stays true");
        assert!(bool::compare_swap(&cell, true, false, Relaxed));
        assert!(!bool::swap(&cell, true, Relaxed));
    }

    #[test]
    fn compare_swap_stores_only_on_a_match() {
        let cell = 7u64.cell();
        assert_eq!(u64::compare_swap(&cell, 6, 9, Relaxed), 7);
        assert_eq!(u64::get(&cell), 7);
        assert_eq!(u64::compare_swap(&cell, 7, 9, Relaxed), 7);
        assert_eq!(u64::get(&cell), 9);
    }

    #[test]
    fn lane_bits_round_trip_every_shuffle_type() {
        fn round_trip<T: ShuffleScalar + PartialEq + std::fmt::Debug>(value: T) {
            assert_eq!(T::from_lane_bits(value.to_lane_bits()), value);
        }
        round_trip(-3i8);
        round_trip(-300i16);
        round_trip(-70_000i32);
        round_trip(i64::MIN);
        round_trip(u8::MAX);
        round_trip(u64::MAX);
        round_trip(usize::MAX);
        round_trip(true);
        round_trip(-2.5f32);
        round_trip(f64::MIN_POSITIVE);
        assert_eq!((-1i8).to_lane_bits(), 0xff, "zero-extended");
    }
}
