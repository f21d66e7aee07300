//! gsync beside other cudarc libraries, on a real GPU: slices that plain cudarc allocated,
//! taken over, run through a kernel and handed back; a `Gpu` over a library's own context and
//! stream; device memory borrowed by address; and memory of another context refused.
//! Run with `bash .gpu/run.sh tests` on a CUDA machine (see README).

use common::cuda_gpu as gpu;
use gsync::cudarc::driver::{CudaContext, DevicePtr};
use gsync::kernels::{smooth, smooth_reference};
use gsync::prelude::*;

/// `n` floats in [0, 1), the same on every run.
fn floats(n: usize) -> Vec<f32> {
    (0..n).map(|i| ((i * 7919) % 1000) as f32 / 1000.0).collect()
}

/// Whether `a` and `b` hold the same floats, bit for bit.
fn same_bits(a: &[f32], b: &[f32]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_cudarc_slice_round_trips_through_a_kernel_without_a_copy() {
    let gpu = gpu();
    let stream = gpu.cuda_stream().unwrap().clone();
    let (n, rounds) = (10_000, 21);
    let input = floats(n);
    let a = stream.clone_htod(&input).unwrap();
    let b = stream.alloc_zeros::<f32>(n).unwrap();
    let address = a.device_ptr(&stream).0;
    let (mut a, mut b) = (gpu.adopt_cudarc(a).unwrap(), gpu.adopt_cudarc(b).unwrap());
    assert_eq!((a.len(), a.backend(), a.is_borrowed()), (n, Backend::Cuda, false));
    smooth::launch(&gpu, &mut a, &mut b, rounds).unwrap();
    let (a, b) = (gpu.release_cudarc(a).unwrap(), gpu.release_cudarc(b).unwrap());
    assert_eq!(a.device_ptr(&stream).0, address, "the same memory came back");
    let result = stream.clone_dtoh(&b).unwrap(); // 21 rounds: the result is in `b`
    assert!(same_bits(&result, &smooth_reference(&input, rounds)));
    assert_eq!(a.len(), n);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_slice_of_another_stream_is_waited_for_and_moved_onto_the_gpu_s() {
    let gpu = gpu();
    let other = gpu.cuda_context().unwrap().new_stream().unwrap();
    let input = floats(4096);
    let a = other.clone_htod(&input).unwrap();
    let a = gpu.adopt_cudarc(a).unwrap();
    assert!(same_bits(&gpu.download(&a).unwrap(), &input));
    let a = gpu.release_cudarc(a).unwrap();
    assert!(**a.stream() == **gpu.cuda_stream().unwrap());
    assert!(same_bits(&a.stream().clone_dtoh(&a).unwrap(), &input));
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn empty_buffers_round_trip_as_empty_slices() {
    let gpu = gpu();
    let empty = gpu.release_cudarc(gpu.zeros::<u32>(0).unwrap()).unwrap();
    assert_eq!(empty.len(), 0);
    let empty = gpu.adopt_cudarc(empty).unwrap();
    assert!(empty.is_empty());
    assert_eq!(gpu.download(&empty).unwrap(), Vec::<u32>::new());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_gpu_over_a_library_s_context_and_stream_runs_on_that_stream() {
    let context = CudaContext::new(0).unwrap();
    let stream = context.new_stream().unwrap();
    let gpu = Gpu::from_cudarc(context.clone(), stream.clone()).unwrap();
    assert_eq!(gpu.backend(), Backend::Cuda);
    assert!(**gpu.cuda_stream().unwrap() == *stream);
    assert!(**gpu.cuda_context().unwrap() == *context);
    let (n, rounds) = (50_000, 40);
    let input = floats(n);
    let mut a = gpu.upload(&input).unwrap();
    let mut b = gpu.zeros::<f32>(n).unwrap();
    // Split into launches and replayed as a CUDA graph too: capture on a context that tracks
    // events.
    for launch in [Launch::new(), Launch::new().barrier(Barrier::MultiLaunch).graph(true)] {
        gpu.write(&mut a, &input).unwrap();
        smooth::launch_with(&gpu, &launch, &mut a, &mut b, rounds).unwrap();
        let a = gpu.release_cudarc(std::mem::replace(&mut a, gpu.zeros(n).unwrap())).unwrap();
        // The library's own copy, queued on the stream after gsync's launch, sees its result.
        let result = stream.clone_dtoh(&a).unwrap(); // 40 rounds: the result is in `a`
        assert!(same_bits(&result, &smooth_reference(&input, rounds)), "{launch:?}");
    }
    // The legacy default stream is refused.
    let error = Gpu::from_cudarc(context.clone(), context.default_stream()).unwrap_err();
    assert!(matches!(error, Error::UnsupportedStream { .. }), "{error}");
    assert!(error.to_string().contains("new_stream"), "{error}");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn borrowed_device_memory_is_used_in_place_and_never_freed() {
    let gpu = gpu();
    let stream = gpu.cuda_stream().unwrap().clone();
    let (n, rounds) = (3000, 10);
    let input = floats(n);
    let owner_a = stream.clone_htod(&input).unwrap();
    let owner_b = stream.alloc_zeros::<f32>(n).unwrap();
    let (ptr_a, ptr_b) = (owner_a.device_ptr(&stream).0, owner_b.device_ptr(&stream).0);
    {
        // SAFETY: the owners hold `n` floats each on this GPU's context, outlive the buffers,
        // and nothing else touches them meanwhile.
        let mut a = unsafe { gpu.borrow_device_ptr::<f32>(ptr_a, n) }.unwrap();
        // SAFETY: as above.
        let mut b = unsafe { gpu.borrow_device_ptr::<f32>(ptr_b, n) }.unwrap();
        assert!(a.is_borrowed());
        smooth::launch(&gpu, &mut a, &mut b, rounds).unwrap();
        let error = gpu.release_cudarc(a).unwrap_err();
        assert!(matches!(error, Error::NotOwned { .. }), "{error}");
    } // dropping the buffers frees nothing
    let result = stream.clone_dtoh(&owner_a).unwrap(); // 10 rounds: the result is in `a`
    assert!(same_bits(&result, &smooth_reference(&input, rounds)));
    drop((owner_a, owner_b)); // the owners free their memory, once
    stream.synchronize().unwrap();
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_slice_of_another_gpu_s_context_is_refused() {
    if CudaContext::device_count().unwrap() < 2 {
        eprintln!("skipped: needs a second GPU for a second context");
        return;
    }
    let gpu = gpu();
    let other = CudaContext::new(1).unwrap().new_stream().unwrap();
    let error = gpu.adopt_cudarc(other.alloc_zeros::<u32>(16).unwrap()).unwrap_err();
    assert!(matches!(error, Error::ForeignContext { memory_gpu: 1, gpu: 0, .. }), "{error}");
    let on_one = Gpu::cuda(1).unwrap();
    let error = gpu.release_cudarc(on_one.zeros::<u32>(4).unwrap()).unwrap_err();
    assert!(matches!(error, Error::ForeignContext { memory_gpu: 1, gpu: 0, .. }), "{error}");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_slice_of_a_non_primary_context_is_refused() {
    let gpu = gpu();
    let context = CudaContext::new_non_primary(0, 0).unwrap();
    let slice = context.new_stream().unwrap().alloc_zeros::<f32>(16).unwrap();
    let error = gpu.adopt_cudarc(slice).unwrap_err();
    assert!(matches!(error, Error::ForeignContext { memory_gpu: 0, gpu: 0, .. }), "{error}");
}
