//! Values passed to a kernel by value, each in an 8-byte parameter slot.

pub(crate) mod sealed {
    /// How a value is passed by value to a kernel; not nameable outside this crate.
    pub trait Value {
        /// The value's bytes, little-endian, zero-padded to a kernel parameter slot.
        fn slot_bytes(self) -> [u8; 8];
        /// The value back from its slot, as the device reads it.
        fn from_slot_bytes(slot: [u8; 8]) -> Self;
    }
}

/// A value passed by value to a kernel: `u8 i8 u16 i16 u32 i32 u64 i64 f32 f64`, `f16`, `bf16`,
/// `bool` and `usize`. Sealed.
pub trait KernelScalar: sealed::Value + Copy {}

/// The kernel parameter slot of `value`: its bytes, little-endian, zero-padded to 8.
pub(crate) fn slot_bytes<T: KernelScalar>(value: T) -> [u8; 8] {
    value.slot_bytes()
}

/// The value of `T` in the kernel parameter slot `slot`: the inverse of [`slot_bytes`].
pub(crate) fn from_slot_bytes<T: KernelScalar>(slot: [u8; 8]) -> T {
    T::from_slot_bytes(slot)
}

/// The first `N` bytes of a slot.
fn slot_prefix<const N: usize>(slot: [u8; 8]) -> [u8; N] {
    let mut bytes = [0; N];
    bytes.copy_from_slice(&slot[..N]);
    bytes
}

/// Pads little-endian bytes to a full slot.
fn slot_of<const N: usize>(bytes: [u8; N]) -> [u8; 8] {
    let mut slot = [0; 8];
    slot[..N].copy_from_slice(&bytes);
    slot
}

macro_rules! numbers {
    ($($ty:ty),* $(,)?) => {$(
        impl sealed::Value for $ty {
            fn slot_bytes(self) -> [u8; 8] {
                slot_of(self.to_le_bytes())
            }
            fn from_slot_bytes(slot: [u8; 8]) -> Self {
                <$ty>::from_le_bytes(slot_prefix(slot))
            }
        }
        impl KernelScalar for $ty {}
    )*};
}

numbers!(u8, i8, u16, i16, u32, i32, u64, i64, f32, f64, half::f16, half::bf16);

impl sealed::Value for bool {
    fn slot_bytes(self) -> [u8; 8] {
        slot_of([u8::from(self)])
    }
    fn from_slot_bytes(slot: [u8; 8]) -> Self {
        slot[0] != 0
    }
}
impl KernelScalar for bool {}

impl sealed::Value for usize {
    // The device's usize is 64 bits whatever the host's width.
    fn slot_bytes(self) -> [u8; 8] {
        slot_of((self as u64).to_le_bytes())
    }
    fn from_slot_bytes(slot: [u8; 8]) -> Self {
        u64::from_le_bytes(slot) as usize
    }
}
impl KernelScalar for usize {}

#[cfg(test)]
mod tests {
    use super::sealed::Value;
    use super::*;

    #[test]
    fn scalars_fill_their_slot_little_endian_and_zero_padded() {
        assert_eq!(0xabu8.slot_bytes(), [0xab, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!((-2i16).slot_bytes(), [0xfe, 0xff, 0, 0, 0, 0, 0, 0]);
        assert_eq!(0x0102_0304u32.slot_bytes(), [4, 3, 2, 1, 0, 0, 0, 0]);
        assert_eq!(1.0f32.slot_bytes(), [0, 0, 0x80, 0x3f, 0, 0, 0, 0]);
        assert_eq!((-1i64).slot_bytes(), [0xff; 8]);
        assert_eq!(1.0f64.slot_bytes(), 1.0f64.to_le_bytes());
        assert_eq!(usize::MAX.slot_bytes(), u64::MAX.to_le_bytes());
    }

    #[test]
    fn scalars_come_back_from_their_slot() {
        fn round_trip<T: KernelScalar + PartialEq + std::fmt::Debug>(value: T) {
            assert_eq!(from_slot_bytes::<T>(slot_bytes(value)), value);
        }
        round_trip(0xabu8);
        round_trip(-2i8);
        round_trip(-2i16);
        round_trip(0xfedcu16);
        round_trip(0x0102_0304u32);
        round_trip(i32::MIN);
        round_trip(-1i64);
        round_trip(u64::MAX);
        round_trip(-0.0f32);
        round_trip(1.5f64);
        round_trip(usize::MAX);
        round_trip(true);
        round_trip(false);
        assert_eq!(from_slot_bytes::<f32>(slot_bytes(f32::NAN)).to_bits(), f32::NAN.to_bits());
    }

    #[test]
    fn bool_is_one_byte() {
        assert_eq!(true.slot_bytes(), [1, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(false.slot_bytes(), [0; 8]);
    }
}
