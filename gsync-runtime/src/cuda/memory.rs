//! Device memory on a CUDA GPU: allocations and host transfers.

use std::mem::ManuallyDrop;

use cudarc::driver::{CudaContext, CudaSlice, DevicePtr, DeviceRepr, ValidAsZeroBits};

use crate::core::error::{Error, Result};
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
    /// At least `len` elements: CUDA refuses zero-byte allocations, so an empty buffer that
    /// gsync allocated holds one element that nothing reads. Dropped by `Drop` if owned.
    slice: ManuallyDrop<CudaSlice<T>>,
    len: usize,
    /// The device address of the first element, taken once: asking the slice again would
    /// wait for and record its cudarc events, which a stream being captured into a graph
    /// refuses (the context of `Gpu::from_cudarc` tracks events).
    address: u64,
    ownership: Ownership,
}

/// Who frees a buffer's memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ownership {
    /// The buffer: cudarc frees it when the buffer is dropped, unless it was handed back.
    Owned,
    /// NVSHMEM, with the team: the buffer lies on a team's symmetric heap.
    Symmetric,
    /// Its owner outside gsync (`Gpu::borrow_device_ptr`): the buffer never frees it.
    Borrowed,
}

impl<T: CudaElement> std::fmt::Debug for CudaBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CudaBuffer").field("len", &self.len).field("gpu", &self.ordinal()).finish()
    }
}

impl<T: CudaElement> CudaBuffer<T> {
    /// A buffer holding a copy of `host`.
    pub(crate) fn upload(gpu: &CudaGpu, host: &[T]) -> Result<Self> {
        gpu.refuse_capturing("an upload")?;
        gpu.health().guard(|| {
            // SAFETY: the contents are overwritten below before anything can read them; the
            // spare element of an empty buffer is never read.
            let slice = unsafe { allocate::<T>(gpu, host.len()) }?;
            let mut buffer = CudaBuffer::new(slice, host.len(), Ownership::Owned);
            buffer.write_unguarded(gpu, host)?;
            Ok(buffer)
        })
    }

    /// A buffer of `len` zeros.
    pub(crate) fn zeros(gpu: &CudaGpu, len: usize) -> Result<Self> {
        gpu.refuse_capturing("an allocation")?;
        gpu.health().guard(|| {
            let bytes = len.max(1) * size_of::<T>();
            let slice = gpu.stream().alloc_zeros::<T>(len.max(1)).map_err(allocation_error(bytes))?;
            landed(gpu, "zeroing a new buffer")?;
            Ok(CudaBuffer::new(slice, len, Ownership::Owned))
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
            Ok(CudaBuffer::new(slice, len, Ownership::Symmetric))
        })
    }

    /// A buffer over `slice`, a cudarc allocation of `gpu`'s context, which it takes over
    /// without a copy: first the slice's own stream is waited for (the work that filled it),
    /// then the slice is moved onto `gpu`'s stream, which frees it in order after gsync's work.
    /// A slice of another context fails with [`Error::ForeignContext`].
    pub(crate) fn adopt(gpu: &CudaGpu, slice: CudaSlice<T>) -> Result<Self> {
        gpu.health().guard(|| {
            check_context(gpu, slice.context(), "Gpu::adopt_cudarc")?;
            let len = slice.len();
            if slice.stream() == gpu.stream() {
                return Ok(CudaBuffer::new(slice, len, Ownership::Owned));
            }
            slice.stream().synchronize().map_err(driver_error("waiting for the stream of a cudarc slice"))?;
            // `leak` waits for the slice's events and gives up its stream, not its memory.
            let address = slice.leak();
            // SAFETY: `address` is the allocation of `len` elements that the slice owned and
            // gave up just now, on this context (checked above); the new slice owns it in its
            // place, and frees it on this GPU's stream.
            let slice = unsafe { gpu.stream().upgrade_device_ptr::<T>(address, len) };
            Ok(CudaBuffer::new(slice, len, Ownership::Owned))
        })
    }

    /// A buffer over `len` elements at `address`, which it never frees.
    ///
    /// # Safety
    /// As [`Gpu::borrow_device_ptr`](crate::Gpu::borrow_device_ptr): `address` holds `len`
    /// elements of `T` in `gpu`'s context for as long as the buffer lives, and nothing else
    /// touches them while gsync uses the buffer.
    pub(crate) unsafe fn borrowed(gpu: &CudaGpu, address: u64, len: usize) -> Self {
        // SAFETY: passed on to the caller; `Drop` leaks the slice rather than freeing it.
        let slice = unsafe { gpu.stream().upgrade_device_ptr::<T>(address, len) };
        CudaBuffer::new(slice, len, Ownership::Borrowed)
    }

    /// The slice, handed to the caller with its memory, once this GPU's stream has finished
    /// gsync's work on it. A buffer gsync does not own fails with [`Error::NotOwned`], one of
    /// another context with [`Error::ForeignContext`].
    pub(crate) fn release(self, gpu: &CudaGpu) -> Result<CudaSlice<T>> {
        if self.ownership != Ownership::Owned {
            return Err(Error::NotOwned { memory: self.ownership.describe() });
        }
        gpu.health().guard(|| {
            check_context(gpu, self.slice.context(), "Gpu::release_cudarc")?;
            gpu.stream().synchronize().map_err(driver_error("finishing gsync's work on a buffer"))
        })?;
        let len = self.len;
        let mut buffer = ManuallyDrop::new(self);
        // SAFETY: `buffer` is never dropped, so the slice is taken once, here.
        let slice = unsafe { ManuallyDrop::take(&mut buffer.slice) };
        if slice.len() == len {
            return Ok(slice);
        }
        // An empty buffer's spare element: the caller gets an empty slice, as it gave.
        drop(slice);
        gpu.stream().null::<T>().map_err(allocation_error(0))
    }

    fn new(slice: CudaSlice<T>, len: usize, ownership: Ownership) -> Self {
        // Event tracking is off on a context gsync opened (see `CudaGpu::open`); on one it was
        // given, the event is recorded when `_record` drops, before any launch uses the address.
        let address = {
            let (address, _record) = slice.device_ptr(slice.stream());
            address
        };
        CudaBuffer { slice: ManuallyDrop::new(slice), len, address, ownership }
    }

    /// Whether the buffer lies on a team's symmetric heap.
    pub(crate) fn is_symmetric(&self) -> bool {
        self.ownership == Ownership::Symmetric
    }

    /// Who frees the buffer's memory.
    pub(crate) fn ownership(&self) -> Ownership {
        self.ownership
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
        self.address
    }

    /// Copies the first `out.len()` elements into `out` and waits for the copy.
    pub(crate) fn download(&self, gpu: &CudaGpu, out: &mut [T]) -> Result<()> {
        gpu.refuse_capturing("a download")?;
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
        gpu.refuse_capturing("a write")?;
        gpu.health().guard(|| self.write_unguarded(gpu, host))
    }

    /// Sets every element to zero (a memset on the GPU's stream).
    pub(crate) fn fill_zeros(&mut self, gpu: &CudaGpu) -> Result<()> {
        gpu.refuse_capturing("zeroing a buffer")?;
        if self.len == 0 {
            return Ok(());
        }
        gpu.health().guard(|| {
            let mut view = self.slice.slice_mut(..self.len);
            gpu.stream().memset_zeros(&mut view).map_err(driver_error("zeroing a buffer"))?;
            landed(gpu, "zeroing a buffer")
        })
    }

    /// Reads element `index`, which must be below the length.
    pub(crate) fn read(&self, gpu: &CudaGpu, index: usize) -> Result<T> {
        gpu.refuse_capturing("a read")?;
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
        gpu.stream().memcpy_htod(host, &mut view).map_err(driver_error("copying a buffer to the GPU"))?;
        landed(gpu, "copying a buffer to the GPU")
    }
}

/// On a GPU with several streams ([`Gpu::new_stream`](crate::Gpu::new_stream)), waits for
/// `gpu`'s stream: a copy or memset returns only once it has landed, so that a launch on
/// another stream finds the buffer written. Launches are then the only work in flight, and a
/// pending one borrows its buffers. With one stream, the stream's order is enough (a second
/// stream waits for the first's copies when it is opened).
fn landed(gpu: &CudaGpu, doing: &str) -> Result<()> {
    if !gpu.has_other_streams() {
        return Ok(());
    }
    gpu.stream().synchronize().map_err(driver_error(doing))
}

impl<T: CudaElement> Drop for CudaBuffer<T> {
    fn drop(&mut self) {
        // SAFETY: the slice is taken once, here, and never touched again.
        let slice = unsafe { ManuallyDrop::take(&mut self.slice) };
        match self.ownership {
            Ownership::Owned => drop(slice),
            // The symmetric heap is NVSHMEM's, freed with the team; borrowed memory is its
            // owner's.
            Ownership::Symmetric | Ownership::Borrowed => {
                let _ = slice.leak();
            }
        }
    }
}

impl Ownership {
    /// The memory a buffer of this ownership holds, as an error names it.
    fn describe(self) -> &'static str {
        match self {
            Ownership::Owned => "memory it owns",
            Ownership::Symmetric => "a team's symmetric memory, which NVSHMEM frees with the team",
            Ownership::Borrowed => "memory it borrowed (Gpu::borrow_device_ptr), which stays its owner's",
        }
    }
}

/// Refuses memory of a context other than `gpu`'s: its addresses mean nothing there.
fn check_context(gpu: &CudaGpu, context: &CudaContext, what: &'static str) -> Result<()> {
    if context == &**gpu.context() {
        Ok(())
    } else {
        Err(Error::ForeignContext { what, memory_gpu: context.ordinal(), gpu: gpu.info().ordinal })
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
