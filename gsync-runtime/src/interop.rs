//! gsync beside other CUDA libraries: a [`Gpu`] over a cudarc context and stream, cudarc
//! slices taken over as buffers and handed back, device memory borrowed by address; and on the
//! emulator, host vectors in the same role. Every conversion moves memory, never copies it,
//! except where a method says so.
//!
//! Which cudarc: 0.19, the version the runtime binds (re-exported as [`crate::cudarc`]), so
//! that its types are the caller's.

use std::sync::Arc;

use crate::buffer::{DeviceBuffer, DeviceScalar, Memory};
use crate::core::device::Backend;
use crate::core::error::{Error, Result};
use crate::cuda::{CUdeviceptr, CudaBuffer, CudaContext, CudaGpu, CudaSlice, CudaStream};
use crate::emu::EmuSlice;
use crate::gpu::Gpu;

impl Gpu {
    /// A CUDA GPU over a context and stream that another cudarc-based library opened: gsync
    /// queues every launch and copy on `stream`, in order with the library's own work there,
    /// and waits for it as it does on its own stream (every call that returns data, and every
    /// launch). The context keeps its event tracking: gsync passes its buffers' addresses,
    /// taken once, so that tracking never interferes with a launch.
    ///
    /// Fails with [`Error::UnsupportedStream`] for the context's legacy default stream (it cannot
    /// be captured into the graph [`Barrier::MultiLaunch`](crate::Barrier::MultiLaunch) replays)
    /// and for a stream of another context.
    ///
    /// ```no_run
    /// # fn main() -> gsync_runtime::Result<()> {
    /// use gsync_runtime::cudarc::driver::CudaContext;
    /// use gsync_runtime::Gpu;
    /// let context = CudaContext::new(0).expect("a CUDA GPU");
    /// let stream = context.new_stream().expect("a stream");
    /// let gpu = Gpu::from_cudarc(context, stream.clone())?;
    /// assert!(**gpu.cuda_stream()? == *stream);
    /// # Ok(()) }
    /// ```
    pub fn from_cudarc(context: Arc<CudaContext>, stream: Arc<CudaStream>) -> Result<Gpu> {
        Ok(Gpu::over(CudaGpu::adopt(context, stream)?))
    }

    /// The CUDA context of this GPU, to allocate memory that kernels launched here can use
    /// with cudarc or a library built on it. [`Error::WrongBackend`] on the emulator.
    pub fn cuda_context(&self) -> Result<&Arc<CudaContext>> {
        Ok(self.require_cuda("Gpu::cuda_context")?.context())
    }

    /// The stream this GPU queues all its work on. [`Error::WrongBackend`] on the emulator.
    pub fn cuda_stream(&self) -> Result<&Arc<CudaStream>> {
        Ok(self.require_cuda("Gpu::cuda_stream")?.stream())
    }

    /// Takes `slice` over as a buffer, without a copy: kernels read and write the slice's
    /// memory, and the buffer frees it through cudarc when dropped, unless
    /// [`release_cudarc`](Self::release_cudarc) hands it back.
    ///
    /// gsync first waits for the slice's stream, so the work that filled it has finished; the
    /// slice then moves onto this GPU's stream. It must be of this GPU's context
    /// ([`cuda_context`](Self::cuda_context); every `CudaContext::new(ordinal)` of one GPU shares
    /// the device's primary context): a slice of another fails with [`Error::ForeignContext`],
    /// and is dropped. [`Error::WrongBackend`] on the emulator, whose counterpart is
    /// [`adopt_vec`](Self::adopt_vec).
    ///
    /// ```no_run
    /// # fn main() -> gsync_runtime::Result<()> {
    /// use gsync_runtime::Gpu;
    /// let gpu = Gpu::cuda(0)?;
    /// let slice = gpu.cuda_stream()?.clone_htod(&[1.0f32, 2.0, 3.0]).expect("a copy");
    /// let buffer = gpu.adopt_cudarc(slice)?; // no copy
    /// // ... launch kernels on `buffer` ...
    /// let slice = gpu.release_cudarc(buffer)?; // no copy either
    /// assert_eq!(gpu.cuda_stream()?.clone_dtoh(&slice).expect("a copy"), [1.0, 2.0, 3.0]);
    /// # Ok(()) }
    /// ```
    pub fn adopt_cudarc<T: DeviceScalar>(&self, slice: CudaSlice<T>) -> Result<DeviceBuffer<T>> {
        let cuda = self.require_cuda("Gpu::adopt_cudarc")?;
        Ok(DeviceBuffer::new(Memory::Cuda(CudaBuffer::adopt(cuda, slice)?)))
    }

    /// Hands a buffer's memory back as a cudarc slice, without a copy, once this GPU's stream has
    /// finished gsync's work on it; the slice is on this GPU's stream, and frees the memory when
    /// dropped. The buffer is consumed, even when this fails.
    ///
    /// Fails with [`Error::NotOwned`] for a buffer whose memory gsync does not own (borrowed with
    /// [`borrow_device_ptr`](Self::borrow_device_ptr), or symmetric), with
    /// [`Error::ForeignContext`] for a buffer of another context, with
    /// [`Error::BufferBackendMismatch`] for an emulator buffer, and with [`Error::WrongBackend`]
    /// on the emulator, whose counterpart is [`release_vec`](Self::release_vec).
    pub fn release_cudarc<T: DeviceScalar>(&self, buffer: DeviceBuffer<T>) -> Result<CudaSlice<T>> {
        let cuda = self.require_cuda("Gpu::release_cudarc")?;
        match buffer.into_memory() {
            Memory::Cuda(memory) => memory.release(cuda),
            Memory::Emulator(_) | Memory::EmuSymmetric(_) => {
                Err(Error::BufferBackendMismatch { buffer: Backend::Emulator, gpu: Backend::Cuda })
            }
        }
    }

    /// A buffer over `len` elements of `T` at device address `ptr`, memory that another library
    /// allocated and keeps: the buffer never frees it ([`DeviceBuffer::is_borrowed`]), and
    /// [`release_cudarc`](Self::release_cudarc) refuses it. For libraries that are not built on
    /// cudarc; a cudarc slice goes through [`adopt_cudarc`](Self::adopt_cudarc).
    /// [`Error::WrongBackend`] on the emulator.
    ///
    /// # Safety
    /// For as long as the buffer lives:
    /// - `ptr` must point to `len` elements of `T` (aligned for `T`) in device memory that this
    ///   GPU's context ([`cuda_context`](Self::cuda_context)) can access, and stay allocated;
    /// - nothing else may read or write those elements while gsync uses the buffer (a launch,
    ///   a copy): whatever another stream does to them must have finished before, and start
    ///   after, the gsync call returns.
    ///
    /// ```no_run
    /// # fn main() -> gsync_runtime::Result<()> {
    /// use gsync_runtime::cudarc::driver::DevicePtr;
    /// use gsync_runtime::Gpu;
    /// let gpu = Gpu::cuda(0)?;
    /// let stream = gpu.cuda_stream()?;
    /// let owner = stream.clone_htod(&[1u32, 2, 3]).expect("a copy"); // the other library's
    /// let (ptr, _record) = owner.device_ptr(stream);
    /// // SAFETY: `owner` holds 3 u32s on this GPU's context, outlives `borrowed`, and nothing
    /// // else touches them meanwhile.
    /// let borrowed = unsafe { gpu.borrow_device_ptr::<u32>(ptr, 3) }?;
    /// assert_eq!(gpu.download(&borrowed)?, [1, 2, 3]);
    /// drop(borrowed); // frees nothing: `owner` still holds the memory
    /// # Ok(()) }
    /// ```
    pub unsafe fn borrow_device_ptr<T: DeviceScalar>(&self, ptr: CUdeviceptr, len: usize) -> Result<DeviceBuffer<T>> {
        let cuda = self.require_cuda("Gpu::borrow_device_ptr")?;
        // SAFETY: the caller vouches for `ptr` and `len`, as `CudaBuffer::borrowed` asks.
        Ok(DeviceBuffer::new(Memory::Cuda(unsafe { CudaBuffer::borrowed(cuda, ptr, len) })))
    }

    /// Moves `host` into a buffer. On the emulator, the buffer takes the vector's memory over
    /// without a copy (on 64-bit hosts; elsewhere wider elements are copied): host vectors play
    /// the role there that cudarc slices play on CUDA
    /// ([`adopt_cudarc`](Self::adopt_cudarc)). On CUDA it is copied, as
    /// [`upload`](Self::upload) does.
    ///
    /// ```
    /// # fn main() -> gsync_runtime::Result<()> {
    /// use gsync_runtime::Gpu;
    /// let gpu = Gpu::emulator();
    /// let host = vec![1u32, 2, 3];
    /// let address = host.as_ptr();
    /// let mut buffer = gpu.adopt_vec(host)?;
    /// gpu.write(&mut buffer, &[4, 5, 6])?; // kernels would write it the same way
    /// let host = gpu.release_vec(buffer)?;
    /// assert_eq!((host.as_ptr(), host), (address, vec![4, 5, 6])); // the same memory
    /// # Ok(()) }
    /// ```
    pub fn adopt_vec<T: DeviceScalar>(&self, host: Vec<T>) -> Result<DeviceBuffer<T>> {
        match self.backend() {
            Backend::Emulator => Ok(DeviceBuffer::new(Memory::Emulator(EmuSlice::from_vec(host)))),
            Backend::Cuda => self.upload(&host),
        }
    }

    /// Moves a buffer's elements out into a vector: on the emulator without a copy (as
    /// [`adopt_vec`](Self::adopt_vec) took them), on CUDA, and for a symmetric buffer, copied as
    /// [`download`](Self::download) does, after which the buffer is dropped.
    pub fn release_vec<T: DeviceScalar>(&self, buffer: DeviceBuffer<T>) -> Result<Vec<T>> {
        match buffer.into_memory() {
            Memory::Emulator(slice) if self.backend() == Backend::Emulator => Ok(slice.into_vec()),
            memory => self.download(&DeviceBuffer::new(memory)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_vector_moves_through_an_emulator_buffer_without_a_copy() {
        let gpu = Gpu::emulator();
        let host: Vec<f32> = (0..100).map(|i| i as f32).collect();
        let address = host.as_ptr() as usize;
        let buffer = gpu.adopt_vec(host.clone()).expect("adopt");
        assert_eq!((buffer.len(), buffer.backend(), buffer.is_borrowed()), (100, Backend::Emulator, false));
        assert_eq!(gpu.download(&buffer).expect("download"), host);
        let back = gpu.release_vec(buffer).expect("release");
        assert_eq!(back, host);
        assert_ne!(back.as_ptr() as usize, address, "a clone went in, so another allocation came out");
        let again = gpu.release_vec(gpu.adopt_vec(back).expect("adopt")).expect("release");
        assert_eq!(again, host);
    }

    #[test]
    fn an_empty_vector_round_trips() {
        let gpu = Gpu::emulator();
        let buffer = gpu.adopt_vec(Vec::<u16>::new()).expect("adopt");
        assert!(buffer.is_empty());
        assert_eq!(gpu.release_vec(buffer).expect("release"), Vec::<u16>::new());
    }

    #[test]
    fn a_symmetric_buffer_is_released_as_a_copy() {
        let gpu = Gpu::emulator();
        let buffer = gpu.symmetric_upload(&[7i32, 8]).expect("symmetric");
        assert_eq!(gpu.release_vec(buffer).expect("release"), [7, 8]);
    }

    #[test]
    fn cudarc_calls_on_the_emulator_are_typed_errors_that_say_what_to_do() {
        let gpu = Gpu::emulator();
        let error = gpu.cuda_context().expect_err("no context");
        assert!(matches!(error, Error::WrongBackend { what: "Gpu::cuda_context", backend: Backend::Emulator }));
        let error = gpu.cuda_stream().expect_err("no stream");
        assert!(matches!(error, Error::WrongBackend { what: "Gpu::cuda_stream", backend: Backend::Emulator }));
        let buffer = gpu.upload(&[1u8, 2]).expect("upload");
        let error = gpu.release_cudarc(buffer).expect_err("no cudarc slice");
        assert!(matches!(error, Error::WrongBackend { what: "Gpu::release_cudarc", .. }), "{error}");
        assert!(error.to_string().contains("Gpu::cuda"), "{error}");
        // SAFETY: the emulator refuses the call before the address is used.
        let error = unsafe { gpu.borrow_device_ptr::<f32>(0x1000, 4) }.expect_err("no device memory");
        assert!(matches!(error, Error::WrongBackend { what: "Gpu::borrow_device_ptr", .. }), "{error}");
    }

    #[test]
    fn interop_errors_name_the_fix() {
        let foreign = Error::ForeignContext { what: "Gpu::adopt_cudarc", memory_gpu: 1, gpu: 0 };
        let message = foreign.to_string();
        assert!(message.contains("context of GPU 1") && message.contains("(GPU 0)"), "{message}");
        assert!(message.contains("Gpu::from_cudarc"), "{message}");
        assert_eq!(foreign.kind(), crate::ErrorKind::Memory);
        let not_owned = Error::NotOwned { memory: "memory it borrowed" };
        assert!(not_owned.to_string().contains("Gpu::download"), "{not_owned}");
        let stream = Error::UnsupportedStream { reason: "it is the legacy default stream" };
        assert!(stream.to_string().starts_with("Gpu::from_cudarc cannot run on the stream given"), "{stream}");
        assert_eq!(stream.kind(), crate::ErrorKind::Configuration);
    }
}
