//! Arrays of `usize` and `bool`, the two scalar types that are no slice element: local arrays
//! of both, shared arrays and shared slices of `usize` (64 bits on the GPU). They run on the
//! emulator against values computed here, and their CUDA compiles through NVRTC.

use gsync::__private::nvrtc_or_skip;
use gsync::prelude::*;
use gsync::{Barrier, KernelSpec};

/// Per thread `g`: four `usize` values above 2^32 and four flags, in local arrays (one of
/// each written element by element, one of each from a list); the sum of the flagged values.
#[grid_phases]
pub fn local_arrays(out: &mut [u64]) {
    for g in grid_stride(0..out.len()) {
        let mut values = [0usize; 4];
        let mut flags = [false; 4];
        for i in 0..4 {
            values[i] = (g << 33) + i;
            flags[i] = (g + i) % 3 == 0;
        }
        let extra = [g + (1usize << 40), 7];
        let keep = [g % 2 == 0, true];
        let mut sum = 0usize;
        for i in 0..4 {
            if flags[i] {
                sum += values[i];
            }
        }
        for i in 0..2 {
            if keep[i] && !flags[0] {
                sum += extra[i];
            }
        }
        out[g] = sum as u64;
    }
}

fn local_arrays_reference(n: usize) -> Vec<u64> {
    (0..n)
        .map(|g| {
            let flags: Vec<bool> = (0..4).map(|i| (g + i) % 3 == 0).collect();
            let mut sum: usize = (0..4).filter(|&i| flags[i]).map(|i| (g << 33) + i).sum();
            let (extra, keep) = ([g + (1 << 40), 7], [g % 2 == 0, true]);
            sum += (0..2).filter(|&i| keep[i] && !flags[0]).map(|i| extra[i]).sum::<usize>();
            sum as u64
        })
        .collect()
}

/// Per block of 64 threads: each thread writes a `usize` above 2^32 into a shared array and
/// reads its mirror's.
#[grid_phases(threads = 64)]
pub fn shared_array_of_usize(out: &mut [u64]) {
    let mut tile = shared_array::<usize, 64>();
    let t = thread_idx() as usize;
    tile[t] = ((block_idx() as usize) << 33) + t;
    sync_block();
    out[global_id() as usize] = tile[63 - t] as u64;
}

fn shared_array_reference(blocks: usize) -> Vec<u64> {
    (0..blocks * 64).map(|g| (((g / 64) << 33) + 63 - g % 64) as u64).collect()
}

/// Per block: `n` `usize` values above 2^32 in a shared slice; thread 0 writes their sum.
#[grid_phases]
pub fn shared_slice_of_usize(out: &mut [u64], n: u32) {
    let mut s = shared_slice::<usize>(n as usize);
    for i in block_stride(0..s.len()) {
        s[i] = (i << 34) + block_idx() as usize;
    }
    sync_block();
    if thread_idx() == 0 {
        let mut sum = 0usize;
        for i in 0..s.len() {
            sum += s[i];
        }
        out[block_idx() as usize] = sum as u64;
    }
}

fn shared_slice_reference(blocks: usize, n: usize) -> Vec<u64> {
    (0..blocks).map(|b| (0..n).map(|i| ((i << 34) + b) as u64).sum()).collect()
}

#[test]
fn local_arrays_of_usize_and_bool_match_rust() {
    let gpu = Gpu::emulator();
    let n = 1000;
    let mut out = gpu.zeros::<u64>(n).unwrap();
    local_arrays::launch(&gpu, &mut out).unwrap();
    assert_eq!(gpu.download(&out).unwrap(), local_arrays_reference(n));
}

#[test]
fn a_shared_array_of_usize_holds_64_bits() {
    let gpu = Gpu::emulator();
    let blocks = 3;
    let mut out = gpu.zeros::<u64>(blocks * 64).unwrap();
    shared_array_of_usize::launch_with(&gpu, &Launch::new().blocks(blocks as u32), &mut out).unwrap();
    assert_eq!(gpu.download(&out).unwrap(), shared_array_reference(blocks));
}

#[test]
fn a_shared_slice_of_usize_holds_64_bits() {
    let gpu = Gpu::emulator();
    let (blocks, n) = (4, 100);
    let mut out = gpu.zeros::<u64>(blocks).unwrap();
    let launch = Launch::new().blocks(blocks as u32).threads(32);
    shared_slice_of_usize::launch_with(&gpu, &launch, &mut out, n as u32).unwrap();
    assert_eq!(gpu.download(&out).unwrap(), shared_slice_reference(blocks, n));
}

#[test]
fn their_cuda_compiles() {
    if !nvrtc_or_skip() {
        return;
    }
    let kernels: [&KernelSpec; 3] =
        [&local_arrays::KERNEL, &shared_array_of_usize::KERNEL, &shared_slice_of_usize::KERNEL];
    for kernel in kernels {
        for bounds_checks in [true, false] {
            let spec = KernelSpec { bounds_checks, ..*kernel };
            let source = spec.source(Barrier::Cooperative, spec.default_block_size());
            if let Err(error) = gsync::compile(&source, spec.name, (9, 0)) {
                panic!("{} (checks {bounds_checks}): {error}", spec.name);
            }
        }
    }
}
