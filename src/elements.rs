//! The bounds of generic kernels and device functions: `T: Num`, `T: Int`,
//! `T: Float`. `#[grid_phases]` reads them by name to know which element
//! types a type parameter admits (and which operations its body may use); the
//! traits give the names a home, `T::ZERO` and `T::ONE` a meaning, and host
//! code the same bounds.

mod sealed {
    pub trait Sealed {}
}

/// An element type of kernels' slices: the integer and float types.
pub trait Num: crate::DeviceScalar + Copy + PartialOrd + sealed::Sealed {
    /// 0 of the type.
    const ZERO: Self;
    /// 1 of the type.
    const ONE: Self;
}

/// The integer element types.
pub trait Int: Num + Ord + Eq {}

/// `f32` and `f64`.
pub trait Float: Num {}

macro_rules! elements {
    ($kind:ident: $($t:ty = $zero:literal, $one:literal);*) => {$(
        impl sealed::Sealed for $t {}
        impl Num for $t {
            const ZERO: Self = $zero;
            const ONE: Self = $one;
        }
        impl $kind for $t {}
    )*};
}

elements!(Int: u8 = 0, 1; i8 = 0, 1; u16 = 0, 1; i16 = 0, 1; u32 = 0, 1; i32 = 0, 1; u64 = 0, 1; i64 = 0, 1);
elements!(Float: f32 = 0.0, 1.0; f64 = 0.0, 1.0);
