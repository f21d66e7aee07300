//! Device memory on a CUDA GPU: allocations and host transfers.

use std::mem::ManuallyDrop;

use cudarc::driver::{CudaSlice, DevicePtr, DeviceRepr, ValidAsZeroBits};

use crate::core::error::Result;
use crate::core::launch::DEFAULT_DEADLINE;
use crate::cuda::context::CudaGpu;
use crate::cuda::team::CudaTeam;
use crate::cuda::{allocation_error, driver_error};

/// What an element of device memory must be for cudarc; not nameable outside this crate.
pub trait CudaElement: DeviceRepr + ValidAsZeroBits + Copy + Default {}

impl CudaElement for u8 {}
impl CudaElement for i8 {}
impl CudaElement for u16 {}
impl CudaElement for i16 {}
impl CudaElement for u32 {}
impl CudaElement for i32 {}
impl CudaElement for u64 {}
impl CudaElement for i64 {}
impl CudaElement for f32 {}
impl CudaElement for f64 {}
impl CudaElement for half::f16 {}
impl CudaElement for half::bf16 {}

/// `len` elements of `T` in a GPU's memory.
pub(crate) struct CudaBuffer<T: CudaElement> {
    /// Never empty: CUDA refuses zero-byte allocations, so an empty buffer holds one element
    /// that nothing reads. Dropped by `Drop`, unless it is symmetric.
    slice: ManuallyDrop<CudaSlice<T>>,
    len: usize,
    /// Whether it lies on a team's symmetric heap, which NVSHMEM frees with the team, not
    /// `cuMemFree`.
    symmetric: bool,
}

impl<T: CudaElement> std::fmt::Debug for CudaBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CudaBuffer").field("len", &self.len).field("gpu", &self.ordinal()).finish()
    }
}

impl<T: CudaElement> CudaBuffer<T> {
    /// A buffer holding a copy of `host`.
    pub(crate) fn upload(gpu: &CudaGpu, host: &[T]) -> Result<Self> {
        gpu.health().guard(|| {
            // SAFETY: the contents are overwritten below before anything can read them; the
            // spare element of an empty buffer is never read.
            let slice = unsafe { allocate::<T>(gpu, host.len()) }?;
            let mut buffer = CudaBuffer { slice: ManuallyDrop::new(slice), len: host.len(), symmetric: false };
            buffer.write_unguarded(gpu, host)?;
            Ok(buffer)
        })
    }

    /// A buffer of `len` zeros.
    pub(crate) fn zeros(gpu: &CudaGpu, len: usize) -> Result<Self> {
        gpu.health().guard(|| {
            let bytes = len.max(1) * size_of::<T>();
            let slice = gpu.stream().alloc_zeros::<T>(len.max(1)).map_err(allocation_error(bytes))?;
            Ok(CudaBuffer { slice: ManuallyDrop::new(slice), len, symmetric: false })
        })
    }

    /// A symmetric buffer of `len` zeros on the team of `gpu`, which must be a PE of one:
    /// collective, every PE allocates the same length in the same order. It lives on the
    /// team's symmetric heap until the team ends.
    pub(crate) fn symmetric_zeros(gpu: &CudaGpu, team: &CudaTeam, len: usize) -> Result<Self> {
        gpu.health().guard(|| {
            let address = team.allocate(len.max(1) * size_of::<T>(), Some(DEFAULT_DEADLINE))?;
            // SAFETY: NVSHMEM allocated (and zeroed, which every element type allows) room for
            // `len.max(1)` elements at `address`, on this GPU, for as long as the team lives,
            // which outlives the buffer (the team is the GPU's, and the buffer borrows neither
            // but is used only with it); `Drop` leaks the slice rather than freeing it.
            let slice = unsafe { gpu.stream().upgrade_device_ptr::<T>(address, len.max(1)) };
            Ok(CudaBuffer { slice: ManuallyDrop::new(slice), len, symmetric: true })
        })
    }

    /// Whether the buffer lies on a team's symmetric heap.
    pub(crate) fn is_symmetric(&self) -> bool {
        self.symmetric
    }

    /// The number of elements.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The ordinal of the GPU that holds the buffer.
    pub(crate) fn ordinal(&self) -> usize {
        self.slice.ordinal()
    }

    /// The device address of the first element.
    pub(crate) fn device_address(&self) -> u64 {
        // Event tracking is off (see `CudaGpu::open`), so there is no event to record on drop.
        let (address, _no_event) = self.slice.device_ptr(self.slice.stream());
        address
    }

    /// Copies the first `out.len()` elements into `out` and waits for the copy.
    pub(crate) fn download(&self, gpu: &CudaGpu, out: &mut [T]) -> Result<()> {
        if out.is_empty() {
            return Ok(());
        }
        gpu.health().guard(|| {
            let view = self.slice.slice(..out.len());
            let copying = "copying a buffer to the host";
            gpu.stream().memcpy_dtoh(&view, out).map_err(driver_error(copying))?;
            // The copy is asynchronous; `out` must not be read before it lands.
            gpu.stream().synchronize().map_err(driver_error(copying))
        })
    }

    /// Overwrites the first `host.len()` elements with `host`.
    pub(crate) fn write(&mut self, gpu: &CudaGpu, host: &[T]) -> Result<()> {
        gpu.health().guard(|| self.write_unguarded(gpu, host))
    }

    /// Sets every element to zero (a memset on the GPU's stream).
    pub(crate) fn fill_zeros(&mut self, gpu: &CudaGpu) -> Result<()> {
        if self.len == 0 {
            return Ok(());
        }
        gpu.health().guard(|| {
            let mut view = self.slice.slice_mut(..self.len);
            gpu.stream().memset_zeros(&mut view).map_err(driver_error("zeroing a buffer"))
        })
    }

    /// Reads element `index`, which must be below the length.
    pub(crate) fn read(&self, gpu: &CudaGpu, index: usize) -> Result<T> {
        gpu.health().guard(|| {
            let mut value = [T::default()];
            let view = self.slice.slice(index..=index);
            let read = driver_error("reading a device value");
            gpu.stream().memcpy_dtoh(&view, &mut value[..]).and_then(|()| gpu.stream().synchronize()).map_err(read)?;
            Ok(value[0])
        })
    }

    fn write_unguarded(&mut self, gpu: &CudaGpu, host: &[T]) -> Result<()> {
        if host.is_empty() {
            return Ok(());
        }
        let mut view = self.slice.slice_mut(..host.len());
        // From pageable memory the driver stages the data before returning, so `host` may be
        // reused as soon as this returns.
        gpu.stream().memcpy_htod(host, &mut view).map_err(driver_error("copying a buffer to the GPU"))
    }
}

impl<T: CudaElement> Drop for CudaBuffer<T> {
    fn drop(&mut self) {
        // SAFETY: the slice is taken once, here, and never touched again.
        let slice = unsafe { ManuallyDrop::take(&mut self.slice) };
        if self.symmetric {
            // The symmetric heap is NVSHMEM's: it is freed with the team.
            let _ = slice.leak();
        } else {
            drop(slice);
        }
    }
}

/// An allocation of `len` uninitialised elements (at least one).
///
/// # Safety
/// The caller must write the elements before they are read.
unsafe fn allocate<T: CudaElement>(gpu: &CudaGpu, len: usize) -> Result<CudaSlice<T>> {
    let bytes = len.max(1) * size_of::<T>();
    // SAFETY: passed on to the caller.
    unsafe { gpu.stream().alloc::<T>(len.max(1)) }.map_err(allocation_error(bytes))
}
