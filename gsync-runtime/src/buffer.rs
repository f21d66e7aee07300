//! Device memory: typed buffers, the element types they may hold, and host transfers.

use std::fmt;

use cudarc::driver::{CudaSlice, DevicePtr};

use crate::error::{Error, Result};
use crate::gpu::Gpu;

mod sealed {
    use cudarc::driver::{DeviceRepr, ValidAsZeroBits};

    /// What a device buffer element must be for cudarc; not nameable outside this crate.
    pub trait Element: DeviceRepr + ValidAsZeroBits {}

    /// How a value is passed by value to a kernel; not nameable outside this crate.
    pub trait Value {
        /// The value's bytes, little-endian, zero-padded to a kernel parameter slot.
        fn slot_bytes(self) -> [u8; 8];
    }
}

/// An element type of device buffers: `u8 i8 u16 i16 u32 i32 u64 i64 f32 f64`. Sealed.
pub trait DeviceScalar: sealed::Element + Copy + Default + Send + Sync + 'static {
    /// The type's name in generated CUDA (the prelude defines these as typedefs).
    const CUDA_NAME: &'static str;
}

/// A value passed by value to a kernel: the [`DeviceScalar`] types, `bool` and `usize`. Sealed.
pub trait KernelScalar: sealed::Value + Copy {}

/// The kernel parameter slot of `value`: its bytes, little-endian, zero-padded to 8.
pub(crate) fn slot_bytes<T: KernelScalar>(value: T) -> [u8; 8] {
    value.slot_bytes()
}

/// Pads little-endian bytes to a full slot.
fn slot_of<const N: usize>(bytes: [u8; N]) -> [u8; 8] {
    let mut slot = [0; 8];
    slot[..N].copy_from_slice(&bytes);
    slot
}

macro_rules! scalars {
    ($($ty:ty => $cuda:literal),* $(,)?) => {$(
        impl sealed::Element for $ty {}
        impl DeviceScalar for $ty {
            const CUDA_NAME: &'static str = $cuda;
        }
        impl sealed::Value for $ty {
            fn slot_bytes(self) -> [u8; 8] {
                slot_of(self.to_le_bytes())
            }
        }
        impl KernelScalar for $ty {}
    )*};
}

scalars!(
    u8 => "u8", i8 => "i8", u16 => "u16", i16 => "i16", u32 => "u32", i32 => "i32",
    u64 => "u64", i64 => "i64", f32 => "f32", f64 => "f64",
);

impl sealed::Value for bool {
    fn slot_bytes(self) -> [u8; 8] {
        slot_of([u8::from(self)])
    }
}
impl KernelScalar for bool {}

impl sealed::Value for usize {
    // The device's usize is 64 bits whatever the host's width.
    fn slot_bytes(self) -> [u8; 8] {
        slot_of((self as u64).to_le_bytes())
    }
}
impl KernelScalar for usize {}

/// A slice of `T` in GPU memory, created by a [`Gpu`].
pub struct DeviceBuffer<T: DeviceScalar> {
    /// Never empty: CUDA refuses zero-byte allocations, so an empty buffer holds one element
    /// that nothing reads.
    slice: CudaSlice<T>,
    len: usize,
}

impl<T: DeviceScalar> DeviceBuffer<T> {
    /// The number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The ordinal of the GPU whose memory holds the buffer.
    pub fn gpu_ordinal(&self) -> usize {
        self.slice.ordinal()
    }

    /// The device address of the first element.
    pub(crate) fn device_ptr(&self) -> u64 {
        // Event tracking is off (see `Gpu::new`), so there is no event to record on drop.
        let (ptr, _no_event) = self.slice.device_ptr(self.slice.stream());
        ptr
    }
}

impl<T: DeviceScalar> fmt::Debug for DeviceBuffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeviceBuffer")
            .field("type", &T::CUDA_NAME)
            .field("len", &self.len)
            .field("gpu", &self.gpu_ordinal())
            .finish()
    }
}

impl Gpu {
    /// Copies `host` into a new device buffer.
    pub fn upload<T: DeviceScalar>(&self, host: &[T]) -> Result<DeviceBuffer<T>> {
        // SAFETY: the contents are overwritten below before anything can read them; the spare
        // element of an empty buffer is never read.
        let mut buffer = unsafe { self.allocate::<T>(host.len()) }?;
        self.write(&mut buffer, host)?;
        Ok(buffer)
    }

    /// A new device buffer of `len` zeros.
    pub fn zeros<T: DeviceScalar>(&self, len: usize) -> Result<DeviceBuffer<T>> {
        let bytes = len.max(1) * size_of::<T>();
        let slice = self.stream().alloc_zeros::<T>(len.max(1)).map_err(Error::allocation(bytes))?;
        Ok(DeviceBuffer { slice, len })
    }

    /// Copies a device buffer into a new vector.
    pub fn download<T: DeviceScalar>(&self, buffer: &DeviceBuffer<T>) -> Result<Vec<T>> {
        let mut host = vec![T::default(); buffer.len];
        self.download_into(buffer, &mut host)?;
        Ok(host)
    }

    /// Copies a device buffer into `out`, which must have the buffer's length.
    pub fn download_into<T: DeviceScalar>(&self, buffer: &DeviceBuffer<T>, out: &mut [T]) -> Result<()> {
        check_lengths(buffer, out.len())?;
        if out.is_empty() {
            return Ok(());
        }
        let view = buffer.slice.slice(..buffer.len);
        self.stream().memcpy_dtoh(&view, out).map_err(Error::driver("copying a buffer to the host"))?;
        // The copy is asynchronous; `out` must not be read before it lands.
        self.stream().synchronize().map_err(Error::driver("copying a buffer to the host"))
    }

    /// Reads element `index` of a buffer; `index` must be below its length.
    pub(crate) fn read_element<T: DeviceScalar>(&self, buffer: &DeviceBuffer<T>, index: usize) -> Result<T> {
        let mut value = [T::default()];
        let view = buffer.slice.slice(index..=index);
        let read = Error::driver("reading a device value");
        self.stream().memcpy_dtoh(&view, &mut value[..]).and_then(|()| self.stream().synchronize()).map_err(read)?;
        Ok(value[0])
    }

    /// Overwrites a device buffer with `host`, which must have the buffer's length.
    pub fn write<T: DeviceScalar>(&self, buffer: &mut DeviceBuffer<T>, host: &[T]) -> Result<()> {
        check_lengths(buffer, host.len())?;
        if host.is_empty() {
            return Ok(());
        }
        let mut view = buffer.slice.slice_mut(..buffer.len);
        // From pageable memory the driver stages the data before returning, so `host` may be
        // reused as soon as this returns.
        self.stream().memcpy_htod(host, &mut view).map_err(Error::driver("copying a buffer to the GPU"))
    }

    /// A buffer of `len` uninitialised elements.
    ///
    /// # Safety
    /// The caller must write the elements before they are read.
    unsafe fn allocate<T: DeviceScalar>(&self, len: usize) -> Result<DeviceBuffer<T>> {
        let bytes = len.max(1) * size_of::<T>();
        let slice = self.stream().alloc::<T>(len.max(1)).map_err(Error::allocation(bytes))?;
        Ok(DeviceBuffer { slice, len })
    }
}

fn check_lengths<T: DeviceScalar>(buffer: &DeviceBuffer<T>, host: usize) -> Result<()> {
    if buffer.len == host {
        Ok(())
    } else {
        Err(Error::LengthMismatch { device: buffer.len, host })
    }
}

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
    fn bool_is_one_byte() {
        assert_eq!(true.slot_bytes(), [1, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(false.slot_bytes(), [0; 8]);
    }

    #[test]
    fn cuda_names_are_the_rust_names() {
        assert_eq!(<u8 as DeviceScalar>::CUDA_NAME, "u8");
        assert_eq!(<i64 as DeviceScalar>::CUDA_NAME, "i64");
        assert_eq!(<f32 as DeviceScalar>::CUDA_NAME, "f32");
    }
}
