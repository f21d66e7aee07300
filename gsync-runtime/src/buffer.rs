//! Device memory: typed buffers, the element types they may hold, and host transfers.

use std::fmt;

use cudarc::driver::{CudaSlice, DevicePtr};

use crate::cuda_gpu::CudaGpu;
use crate::emu::{EmuScalar, EmuSlice};
use crate::error::{Error, Result};
use crate::gpu::{Backend, Device, Gpu};

mod sealed {
    use cudarc::driver::{DeviceRepr, ValidAsZeroBits};

    /// What a device buffer element must be for cudarc; not nameable outside this crate.
    pub trait Element: DeviceRepr + ValidAsZeroBits {}

    /// How a value is passed by value to a kernel; not nameable outside this crate.
    pub trait Value {
        /// The value's bytes, little-endian, zero-padded to a kernel parameter slot.
        fn slot_bytes(self) -> [u8; 8];
        /// The value back from its slot, as the device reads it.
        fn from_slot_bytes(slot: [u8; 8]) -> Self;
    }
}

/// An element type of device buffers: `u8 i8 u16 i16 u32 i32 u64 i64 f32 f64`. Sealed.
pub trait DeviceScalar: sealed::Element + EmuScalar + Copy + Default + Send + Sync + 'static {
    /// The type's name in generated CUDA (the prelude defines these as typedefs).
    const CUDA_NAME: &'static str;
}

/// A value passed by value to a kernel: the [`DeviceScalar`] types, `bool` and `usize`. Sealed.
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
            fn from_slot_bytes(slot: [u8; 8]) -> Self {
                <$ty>::from_le_bytes(slot_prefix(slot))
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

/// A slice of `T` in GPU memory, created by a [`Gpu`]: device memory on CUDA, host memory
/// shared by the emulated threads on the emulator.
pub struct DeviceBuffer<T: DeviceScalar> {
    memory: Memory<T>,
    len: usize,
}

/// Where a buffer's elements live.
enum Memory<T: DeviceScalar> {
    /// Never empty: CUDA refuses zero-byte allocations, so an empty buffer holds one element
    /// that nothing reads.
    Cuda(CudaSlice<T>),
    /// Exactly `len` elements.
    Emulator(EmuSlice<T>),
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

    /// The ordinal of the GPU whose memory holds the buffer; 0 on the emulator.
    pub fn gpu_ordinal(&self) -> usize {
        match &self.memory {
            Memory::Cuda(slice) => slice.ordinal(),
            Memory::Emulator(_) => 0,
        }
    }

    /// The backend whose memory holds the buffer.
    pub fn backend(&self) -> Backend {
        match &self.memory {
            Memory::Cuda(_) => Backend::Cuda,
            Memory::Emulator(_) => Backend::Emulator,
        }
    }

    /// The buffer's elements as the emulated threads share them; for the code
    /// `#[grid_phases]` generates. Fails with [`Error::BufferBackendMismatch`] on a CUDA buffer.
    #[doc(hidden)]
    pub fn emu(&self) -> Result<&EmuSlice<T>> {
        match &self.memory {
            Memory::Emulator(slice) => Ok(slice),
            Memory::Cuda(_) => Err(Error::BufferBackendMismatch { buffer: Backend::Cuda, gpu: Backend::Emulator }),
        }
    }

    /// The device allocation, or [`Error::BufferBackendMismatch`] for an emulator buffer.
    pub(crate) fn cuda_slice(&self) -> Result<&CudaSlice<T>> {
        match &self.memory {
            Memory::Cuda(slice) => Ok(slice),
            Memory::Emulator(_) => Err(Error::BufferBackendMismatch { buffer: Backend::Emulator, gpu: Backend::Cuda }),
        }
    }

    fn cuda_slice_mut(&mut self) -> Result<&mut CudaSlice<T>> {
        match &mut self.memory {
            Memory::Cuda(slice) => Ok(slice),
            Memory::Emulator(_) => Err(Error::BufferBackendMismatch { buffer: Backend::Emulator, gpu: Backend::Cuda }),
        }
    }

    /// The device address of the first element; `None` for an emulator buffer.
    pub(crate) fn device_ptr(&self) -> Option<u64> {
        let slice = self.cuda_slice().ok()?;
        // Event tracking is off (see `CudaGpu::open`), so there is no event to record on drop.
        let (ptr, _no_event) = slice.device_ptr(slice.stream());
        Some(ptr)
    }
}

impl<T: DeviceScalar> fmt::Debug for DeviceBuffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeviceBuffer")
            .field("type", &T::CUDA_NAME)
            .field("len", &self.len)
            .field("backend", &self.backend())
            .field("gpu", &self.gpu_ordinal())
            .finish()
    }
}

impl Gpu {
    /// Copies `host` into a new device buffer.
    pub fn upload<T: DeviceScalar>(&self, host: &[T]) -> Result<DeviceBuffer<T>> {
        match self.device() {
            Device::Cuda(cuda) => cuda.upload(host),
            Device::Emulator(_) => {
                Ok(DeviceBuffer { memory: Memory::Emulator(EmuSlice::from_host(host)), len: host.len() })
            }
        }
    }

    /// A new device buffer of `len` zeros.
    pub fn zeros<T: DeviceScalar>(&self, len: usize) -> Result<DeviceBuffer<T>> {
        match self.device() {
            Device::Cuda(cuda) => cuda.zeros(len),
            Device::Emulator(_) => Ok(DeviceBuffer { memory: Memory::Emulator(EmuSlice::zeroed(len)), len }),
        }
    }

    /// Copies a device buffer into a new vector.
    pub fn download<T: DeviceScalar>(&self, buffer: &DeviceBuffer<T>) -> Result<Vec<T>> {
        let mut host = vec![T::default(); buffer.len];
        self.download_into(buffer, &mut host)?;
        Ok(host)
    }

    /// Copies a device buffer into `out`, which must have the buffer's length.
    pub fn download_into<T: DeviceScalar>(&self, buffer: &DeviceBuffer<T>, out: &mut [T]) -> Result<()> {
        match self.device() {
            Device::Cuda(cuda) => {
                let slice = buffer.cuda_slice()?;
                check_lengths(buffer, out.len())?;
                cuda.copy_to_host(slice, out)
            }
            Device::Emulator(_) => {
                let slice = buffer.emu()?;
                check_lengths(buffer, out.len())?;
                slice.copy_to(out);
                Ok(())
            }
        }
    }

    /// Overwrites a device buffer with `host`, which must have the buffer's length.
    pub fn write<T: DeviceScalar>(&self, buffer: &mut DeviceBuffer<T>, host: &[T]) -> Result<()> {
        match self.device() {
            Device::Cuda(cuda) => {
                check_lengths(buffer, host.len())?;
                cuda.copy_from_host(buffer.cuda_slice_mut()?, host)
            }
            Device::Emulator(_) => {
                let slice = buffer.emu()?;
                check_lengths(buffer, host.len())?;
                slice.copy_from(host);
                Ok(())
            }
        }
    }
}

impl CudaGpu {
    /// Copies `host` into a new device buffer.
    fn upload<T: DeviceScalar>(&self, host: &[T]) -> Result<DeviceBuffer<T>> {
        self.health().guard(|| {
            // SAFETY: the contents are overwritten below before anything can read them; the
            // spare element of an empty buffer is never read.
            let mut slice = unsafe { self.allocate::<T>(host.len()) }?;
            self.copy_from_host(&mut slice, host)?;
            Ok(DeviceBuffer { memory: Memory::Cuda(slice), len: host.len() })
        })
    }

    /// A new device buffer of `len` zeros.
    fn zeros<T: DeviceScalar>(&self, len: usize) -> Result<DeviceBuffer<T>> {
        self.health().guard(|| {
            let bytes = len.max(1) * size_of::<T>();
            let slice = self.stream().alloc_zeros::<T>(len.max(1)).map_err(Error::allocation(bytes))?;
            Ok(DeviceBuffer { memory: Memory::Cuda(slice), len })
        })
    }

    /// Copies the first `out.len()` elements of `slice` into `out`.
    fn copy_to_host<T: DeviceScalar>(&self, slice: &CudaSlice<T>, out: &mut [T]) -> Result<()> {
        if out.is_empty() {
            return Ok(());
        }
        self.health().guard(|| {
            let view = slice.slice(..out.len());
            self.stream().memcpy_dtoh(&view, out).map_err(Error::driver("copying a buffer to the host"))?;
            // The copy is asynchronous; `out` must not be read before it lands.
            self.stream().synchronize().map_err(Error::driver("copying a buffer to the host"))
        })
    }

    /// Overwrites the first `host.len()` elements of `slice` with `host`.
    fn copy_from_host<T: DeviceScalar>(&self, slice: &mut CudaSlice<T>, host: &[T]) -> Result<()> {
        if host.is_empty() {
            return Ok(());
        }
        self.health().guard(|| {
            let mut view = slice.slice_mut(..host.len());
            // From pageable memory the driver stages the data before returning, so `host` may
            // be reused as soon as this returns.
            self.stream().memcpy_htod(host, &mut view).map_err(Error::driver("copying a buffer to the GPU"))
        })
    }

    /// Reads element `index` of a buffer; `index` must be below its length.
    pub(crate) fn read_element<T: DeviceScalar>(&self, buffer: &DeviceBuffer<T>, index: usize) -> Result<T> {
        self.health().guard(|| {
            let mut value = [T::default()];
            let view = buffer.cuda_slice()?.slice(index..=index);
            let read = Error::driver("reading a device value");
            self.stream()
                .memcpy_dtoh(&view, &mut value[..])
                .and_then(|()| self.stream().synchronize())
                .map_err(read)?;
            Ok(value[0])
        })
    }

    /// An allocation of `len` uninitialised elements (at least one).
    ///
    /// # Safety
    /// The caller must write the elements before they are read.
    unsafe fn allocate<T: DeviceScalar>(&self, len: usize) -> Result<CudaSlice<T>> {
        let bytes = len.max(1) * size_of::<T>();
        self.stream().alloc::<T>(len.max(1)).map_err(Error::allocation(bytes))
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
    fn scalars_come_back_from_their_slot() {
        fn round_trip<T: KernelScalar + PartialEq + fmt::Debug>(value: T) {
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

    #[test]
    fn emulator_buffers_round_trip_and_check_lengths() {
        let gpu = Gpu::emulator();
        let host: Vec<f64> = (0..1000).map(|i| f64::from(i) * 0.5).collect();
        let mut buffer = gpu.upload(&host).expect("upload");
        assert_eq!((buffer.backend(), buffer.gpu_ordinal(), buffer.len()), (Backend::Emulator, 0, 1000));
        assert_eq!(gpu.download(&buffer).expect("download"), host);
        let doubled: Vec<f64> = host.iter().map(|x| x * 2.0).collect();
        gpu.write(&mut buffer, &doubled).expect("write");
        let mut out = vec![0.0; 1000];
        gpu.download_into(&buffer, &mut out).expect("download_into");
        assert_eq!(out, doubled);
        let mismatch = gpu.write(&mut buffer, &doubled[..10]);
        assert!(matches!(mismatch, Err(Error::LengthMismatch { device: 1000, host: 10 })));
        let mismatch = gpu.download_into(&buffer, &mut out[..3]);
        assert!(matches!(mismatch, Err(Error::LengthMismatch { device: 1000, host: 3 })));
        assert_eq!(gpu.download(&gpu.zeros::<i16>(33).expect("zeros")).expect("download"), vec![0i16; 33]);
        let empty = gpu.upload::<u8>(&[]).expect("empty upload");
        assert!(empty.is_empty());
        assert_eq!(gpu.download(&empty).expect("empty download"), Vec::<u8>::new());
    }

    #[test]
    fn an_emulator_buffer_has_no_device_address_for_a_cuda_launch() {
        let gpu = Gpu::emulator();
        let mut buffer = gpu.upload(&[1u32, 2]).expect("upload");
        assert_eq!(buffer.device_ptr(), None);
        let error = buffer.cuda_slice().expect_err("emulator memory");
        assert!(matches!(error, Error::BufferBackendMismatch { buffer: Backend::Emulator, gpu: Backend::Cuda }));
        assert!(error.to_string().contains("a buffer of the CPU emulator backend was used with a CUDA Gpu"), "{error}");
        let mut args = crate::KernelArgs::new();
        args.scalar(1u8);
        assert!(!args.has_emulator_buffer());
        args.slice_mut(&mut buffer);
        assert!(args.has_emulator_buffer());
    }

    #[test]
    fn cuda_names_are_the_rust_names() {
        assert_eq!(<u8 as DeviceScalar>::CUDA_NAME, "u8");
        assert_eq!(<i64 as DeviceScalar>::CUDA_NAME, "i64");
        assert_eq!(<f32 as DeviceScalar>::CUDA_NAME, "f32");
    }
}
