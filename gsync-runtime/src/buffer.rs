//! Typed buffers in a GPU's memory, and the element types they may hold.

use std::any::Any;
use std::fmt;

use crate::core::args::{sealed, KernelBuffer};
use crate::core::device::Backend;
use crate::core::error::{Error, Result};
use crate::core::scalar::KernelScalar;
use crate::cuda::{CudaBuffer, CudaElement, Ownership};
use crate::emu::{symmetric_view, EmuLaunch, EmuScalar, EmuSlice, EmuSymmetric, TeamSlices};

/// An element type of device buffers: `u8 i8 u16 i16 u32 i32 u64 i64 f32 f64`, and the half
/// precision types `f16` and `bf16`. Sealed: each
/// backend must be able to hold it.
pub trait DeviceScalar: KernelScalar + EmuScalar + CudaElement + Default + Send + Sync + 'static {
    /// The type's name in generated CUDA (the prelude defines these as typedefs).
    const CUDA_NAME: &'static str;
}

macro_rules! device_scalars {
    ($($ty:ty => $cuda:literal),* $(,)?) => {$(
        impl DeviceScalar for $ty {
            const CUDA_NAME: &'static str = $cuda;
        }
    )*};
}

device_scalars!(
    u8 => "u8", i8 => "i8", u16 => "u16", i16 => "i16", u32 => "u32", i32 => "i32",
    u64 => "u64", i64 => "i64", f32 => "f32", f64 => "f64",
    half::f16 => "f16", half::bf16 => "bf16",
);

/// A slice of `T` in GPU memory, created by a [`Gpu`](crate::Gpu): device memory on CUDA,
/// host memory shared by the emulated threads on the emulator.
///
/// A kernel's `&[T]` parameter takes a `&DeviceBuffer<T>`, its `&mut [T]` a
/// `&mut DeviceBuffer<T>`; [`Gpu::download`](crate::Gpu::download) copies one back.
///
/// ```
/// # fn main() -> gsync_runtime::Result<()> {
/// use gsync_runtime::{f16, Gpu};
/// let gpu = Gpu::emulator();
/// let keys = gpu.upload(&[3u32, 1, 2])?;
/// assert_eq!((keys.len(), keys.is_empty()), (3, false));
/// let halves = gpu.upload(&[f16::from_f32(0.5); 4])?;
/// assert_eq!(gpu.download(&halves)?[0].to_f32(), 0.5);
/// // A length that does not match is an error, not a partial copy.
/// let mut out = [0u32; 2];
/// assert!(gpu.download_into(&keys, &mut out).is_err());
/// # Ok(()) }
/// ```
pub struct DeviceBuffer<T: DeviceScalar> {
    memory: Memory<T>,
}

/// Where a buffer's elements live.
pub(crate) enum Memory<T: DeviceScalar> {
    Cuda(CudaBuffer<T>),
    Emulator(EmuSlice<T>),
    /// A symmetric buffer of an emulated team: every PE's slice, held by one PE.
    EmuSymmetric(TeamSlices<T>),
}

impl<T: DeviceScalar> DeviceBuffer<T> {
    pub(crate) fn new(memory: Memory<T>) -> Self {
        DeviceBuffer { memory }
    }

    /// The buffer's memory, taken apart from it.
    pub(crate) fn into_memory(self) -> Memory<T> {
        self.memory
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        match &self.memory {
            Memory::Cuda(buffer) => buffer.len(),
            Memory::Emulator(slice) => slice.len(),
            Memory::EmuSymmetric(slices) => slices.local().len(),
        }
    }

    /// Whether the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The ordinal of the GPU whose memory holds the buffer; on the emulator 0, or the PE of
    /// an emulated team whose part it is.
    pub fn gpu_ordinal(&self) -> usize {
        match &self.memory {
            Memory::Cuda(buffer) => buffer.ordinal(),
            Memory::Emulator(_) => 0,
            Memory::EmuSymmetric(slices) => slices.pe(),
        }
    }

    /// The backend whose memory holds the buffer.
    pub fn backend(&self) -> Backend {
        match &self.memory {
            Memory::Cuda(_) => Backend::Cuda,
            Memory::Emulator(_) | Memory::EmuSymmetric(_) => Backend::Emulator,
        }
    }

    /// The buffer's elements as the emulated threads share them; for the code
    /// `#[grid_phases]` generates. Fails with [`Error::BufferBackendMismatch`] on a CUDA buffer.
    #[doc(hidden)]
    pub fn emu(&self) -> Result<&EmuSlice<T>> {
        match &self.memory {
            Memory::Emulator(slice) => Ok(slice),
            Memory::EmuSymmetric(slices) => Ok(slices.local()),
            Memory::Cuda(_) => Err(Error::BufferBackendMismatch { buffer: Backend::Cuda, gpu: Backend::Emulator }),
        }
    }

    /// The buffer passed for `#[symmetric]` parameter `param` of `launch`, as a symmetric
    /// slice seen from this PE; for the code `#[grid_phases]` generates. On a PE of a team of
    /// more than one, a buffer that is not symmetric fails with [`Error::NotSymmetric`];
    /// elsewhere any buffer is that of a team of one.
    #[doc(hidden)]
    pub fn emu_symmetric(&self, launch: &EmuLaunch<'_>, param: &str) -> Result<EmuSymmetric<'_, T>> {
        let (kernel, member) = (launch.kernel_name(), launch.member());
        match &self.memory {
            Memory::Emulator(slice) => symmetric_view(None, slice, member, kernel, param),
            Memory::EmuSymmetric(slices) => symmetric_view(Some(slices), slices.local(), member, kernel, param),
            Memory::Cuda(_) => Err(Error::BufferBackendMismatch { buffer: Backend::Cuda, gpu: Backend::Emulator }),
        }
    }

    /// Whether the buffer was allocated on every PE of a team (`Gpu::symmetric_zeros`).
    pub fn is_symmetric(&self) -> bool {
        match &self.memory {
            Memory::EmuSymmetric(_) => true,
            Memory::Cuda(buffer) => buffer.is_symmetric(),
            Memory::Emulator(_) => false,
        }
    }

    /// Whether the buffer borrows memory that it never frees
    /// ([`Gpu::borrow_device_ptr`](crate::Gpu::borrow_device_ptr)).
    pub fn is_borrowed(&self) -> bool {
        match &self.memory {
            Memory::Cuda(buffer) => buffer.ownership() == Ownership::Borrowed,
            Memory::Emulator(_) | Memory::EmuSymmetric(_) => false,
        }
    }

    /// The device memory, or [`Error::BufferBackendMismatch`] for an emulator buffer.
    pub(crate) fn cuda(&self) -> Result<&CudaBuffer<T>> {
        match &self.memory {
            Memory::Cuda(buffer) => Ok(buffer),
            Memory::Emulator(_) | Memory::EmuSymmetric(_) => {
                Err(Error::BufferBackendMismatch { buffer: Backend::Emulator, gpu: Backend::Cuda })
            }
        }
    }

    /// The device memory, writable, or [`Error::BufferBackendMismatch`] for an emulator buffer.
    pub(crate) fn cuda_mut(&mut self) -> Result<&mut CudaBuffer<T>> {
        match &mut self.memory {
            Memory::Cuda(buffer) => Ok(buffer),
            Memory::Emulator(_) | Memory::EmuSymmetric(_) => {
                Err(Error::BufferBackendMismatch { buffer: Backend::Emulator, gpu: Backend::Cuda })
            }
        }
    }

    /// Refuses a host slice of another length.
    pub(crate) fn check_length(&self, host: usize) -> Result<()> {
        if self.len() == host {
            Ok(())
        } else {
            Err(Error::LengthMismatch { device: self.len(), host })
        }
    }
}

impl<T: DeviceScalar> sealed::Buffer for DeviceBuffer<T> {}

impl<T: DeviceScalar> KernelBuffer for DeviceBuffer<T> {
    fn len(&self) -> usize {
        DeviceBuffer::len(self)
    }

    fn element_bytes(&self) -> usize {
        size_of::<T>()
    }

    fn device_address(&self) -> Option<u64> {
        self.cuda().ok().map(CudaBuffer::device_address)
    }

    fn gpu_ordinal(&self) -> usize {
        DeviceBuffer::gpu_ordinal(self)
    }

    fn is_symmetric(&self) -> bool {
        DeviceBuffer::is_symmetric(self)
    }

    fn emulated(&self) -> Option<&(dyn Any + Send + Sync)> {
        match &self.memory {
            Memory::Emulator(slice) => Some(slice),
            Memory::EmuSymmetric(slices) => Some(slices.local()),
            Memory::Cuda(_) => None,
        }
    }

    fn emulated_team(&self) -> Option<&(dyn Any + Send + Sync)> {
        match &self.memory {
            Memory::EmuSymmetric(slices) => Some(slices),
            Memory::Emulator(_) | Memory::Cuda(_) => None,
        }
    }
}

impl<T: DeviceScalar> fmt::Debug for DeviceBuffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeviceBuffer")
            .field("type", &T::CUDA_NAME)
            .field("len", &self.len())
            .field("backend", &self.backend())
            .field("gpu", &self.gpu_ordinal())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::KernelArgs;
    use crate::Gpu;

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
        assert_eq!(buffer.device_address(), None);
        assert!(buffer.emulated().and_then(|memory| memory.downcast_ref::<EmuSlice<u32>>()).is_some());
        let error = buffer.cuda().expect_err("emulator memory");
        assert!(matches!(error, Error::BufferBackendMismatch { buffer: Backend::Emulator, gpu: Backend::Cuda }));
        assert!(error.to_string().contains("a buffer of the CPU emulator backend was used with a CUDA Gpu"), "{error}");
        let mut args = KernelArgs::new();
        args.slice_mut(&mut buffer);
        assert_eq!(args.buffers().map(|buffer| buffer.device_address()).collect::<Vec<_>>(), [None]);
    }

    #[test]
    fn cuda_names_are_the_rust_names() {
        assert_eq!(<u8 as DeviceScalar>::CUDA_NAME, "u8");
        assert_eq!(<i64 as DeviceScalar>::CUDA_NAME, "i64");
        assert_eq!(<f32 as DeviceScalar>::CUDA_NAME, "f32");
    }
}
