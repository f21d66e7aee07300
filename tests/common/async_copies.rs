//! Async copies: kernels that stage global memory in shared memory with `copy_chunk_async`
//! and `wait_async_copies`, their CPU references and the checks the emulator and GPU tests
//! share.

use super::checks::{random_vec, rng, Scale};
use gsync::prelude::*;

#[gsync::kernels]
pub mod kernels {
    /// Issues the copy of tile `tile` of `keys` (four keys per thread) into half `half` of
    /// `stage`.
    #[device]
    fn stage_tile(stage: &mut [u32], half: u32, keys: &[u32], tile: u32) {
        let t = thread_idx();
        stage.copy_chunk_async::<4>(half * block_dim() + t, keys, tile * block_dim() + t);
    }

    /// Every whole tile of `4 · block_dim()` keys reversed into `out`, staged in two halves of a
    /// shared slice: the block's next tile is in flight while it reverses this one. The keys
    /// past the last whole tile are copied as they are.
    #[grid_phases(threads = 64)]
    pub fn reverse_tiles(keys: &[u32], out: &mut [u32]) {
        let mut stage = shared_slice::<u32>(8 * block_dim() as usize);
        let tile = 4 * block_dim();
        let tiles = keys.len() as u32 / tile;
        let t = thread_idx();
        let mut b = block_idx();
        let mut half = 0u32;
        if b < tiles {
            stage_tile(&mut stage, half, keys, b);
        }
        while b < tiles {
            let next = b + grid_dim();
            wait_async_copies();
            // Every thread's part of this tile has landed, and every thread is done with the
            // other half, which the next tile overwrites.
            sync_block();
            if next < tiles {
                stage_tile(&mut stage, 1 - half, keys, next);
            }
            for j in 0..4u32 {
                let e = 4 * ((t + 1) % block_dim()) + j;
                out[(b * tile + tile - 1 - e) as usize] = stage[(half * tile + e) as usize];
            }
            half = 1 - half;
            b = next;
        }
        for i in grid_stride((tiles * tile) as usize..keys.len()) {
            out[i] = keys[i];
        }
    }

    /// Async copies of 4, 8, 16 and 32 bytes into a shared array, each thread's chunk read back
    /// by the next thread after the wait and a `sync_block()`: `u16` pairs, single `f64`s,
    /// sixteen `u8`s and four `i64`s.
    #[grid_phases(threads = 32)]
    pub fn async_copy_widths(
        shorts: &[u16],
        doubles: &[f64],
        bytes: &[u8],
        longs: &[i64],
        out_shorts: &mut [u16],
        out_doubles: &mut [f64],
        out_bytes: &mut [u8],
        out_longs: &mut [i64],
    ) {
        let mut s = shared_array::<u16, 64>();
        let mut d = shared_array::<f64, 32>();
        let mut b = shared_array::<u8, 512>();
        let mut l = shared_array::<i64, 128>();
        let t = thread_idx() as usize;
        let g = global_id() as usize;
        s.copy_chunk_async::<2>(t, shorts, g);
        d.copy_chunk_async::<1>(t, doubles, g);
        b.copy_chunk_async::<16>(t, bytes, g);
        l.copy_chunk_async::<4>(t, longs, g);
        wait_async_copies();
        sync_block();
        let from = (t + 1) % 32;
        let first = g - t;
        let pair = s.load_chunk::<2>(from);
        out_shorts.store_chunk(first + t, pair);
        out_doubles[first + t] = d[from];
        let sixteen = b.load_chunk::<16>(from);
        out_bytes.store_chunk(first + t, sixteen);
        let four = l.load_chunk::<4>(from);
        out_longs.store_chunk(first + t, four);
    }

    /// Thread 0 of block 0 copies the first chunk of `keys` into a shared array of sevens and
    /// reads the array into `early` before its wait (a race: what a GPU shows is undefined)
    /// and into `late` after it.
    #[grid_phases(threads = 32)]
    pub fn async_copy_read_too_soon(keys: &[u32], early: &mut [u32], late: &mut [u32]) {
        let mut stage = shared_array::<u32, 4>();
        if global_id() == 0 {
            for i in 0..4 {
                stage[i] = 7;
            }
            stage.copy_chunk_async::<4>(0, keys, 0);
            for i in 0..4 {
                early[i] = stage[i];
            }
            wait_async_copies();
            for i in 0..4 {
                late[i] = stage[i];
            }
        }
    }

    /// Thread 0 of block 0 copies the first chunk of `keys` into a shared array; then, after a
    /// barrier, the thread whose global index is `writer` writes 99 to `keys[at]` (a race with
    /// the copy, which thread 0 waits for only after a second barrier: what a GPU copies is
    /// undefined); after the wait, the array goes to `out`.
    #[grid_phases(threads = 32)]
    pub fn async_copy_source_written(keys: &mut [u32], out: &mut [u32], writer: u32, at: usize) {
        let mut stage = shared_array::<u32, 4>();
        if global_id() == 0 {
            stage.copy_chunk_async::<4>(0, keys, 0);
        }
        sync_block();
        if global_id() == writer {
            keys[at] = 99;
        }
        sync_block();
        if global_id() == 0 {
            wait_async_copies();
            for i in 0..4 {
                out[i] = stage[i];
            }
        }
    }

    /// Thread 0 copies chunk `c` of `keys` into chunk `d` of a shared array of 8 and, after the
    /// wait, the array into `out`.
    #[grid_phases(threads = 32)]
    pub fn async_copy_past_the_end(keys: &[u32], out: &mut [u32], c: usize, d: usize) {
        let mut stage = shared_array::<u32, 8>();
        if global_id() == 0 {
            for i in 0..8 {
                stage[i] = 1;
            }
            stage.copy_chunk_async::<4>(d, keys, c);
            wait_async_copies();
            for i in 0..8 {
                out[i] = stage[i];
            }
        }
    }
}

/// The async-copy kernels, for the CUDA compile test.
pub fn async_copy_kernels() -> Vec<&'static gsync::KernelSpec> {
    vec![
        &kernels::reverse_tiles::KERNEL,
        &kernels::async_copy_widths::KERNEL,
        &kernels::async_copy_past_the_end::KERNEL,
        &kernels::async_copy_read_too_soon::KERNEL,
        &kernels::async_copy_source_written::KERNEL,
    ]
}

/// Tiles staged by async copies, the next in flight while the block works on this one, come
/// out reversed where Rust reverses them, on grids with more tiles than blocks and fewer.
pub fn async_copies_stage_tiles_while_the_block_works(gpu: &Gpu, scale: Scale) {
    let tile = 4 * 64;
    let n = scale.pick(1000 * tile + 77, 13 * tile + 5);
    let keys: Vec<u32> = random_vec(&mut rng(), n);
    let mut expected: Vec<u32> = keys.chunks(tile).flat_map(|c| c.iter().rev().copied()).collect();
    expected[n / tile * tile..].copy_from_slice(&keys[n / tile * tile..]);
    let input = gpu.upload(&keys).unwrap();
    for blocks in [None, Some(1), Some(3)] {
        let launch = match blocks {
            Some(b) => Launch::new().blocks(b),
            None => Launch::new(),
        };
        let mut out = gpu.zeros::<u32>(n).unwrap();
        kernels::reverse_tiles::launch_with(gpu, &launch, &input, &mut out).unwrap();
        assert!(gpu.download(&out).unwrap() == expected, "{blocks:?} blocks: the tiles differ from the CPU's");
    }
}

/// Async copies of 4, 8, 16 and 32 bytes move every element where Rust would.
pub fn async_copies_of_every_width_move_every_element(gpu: &Gpu, _: Scale) {
    let mut rng = rng();
    let (blocks, threads) = (3usize, 32usize);
    let n = blocks * threads;
    let shorts: Vec<u16> = random_vec::<u32>(&mut rng, 2 * n).into_iter().map(|x| x as u16).collect();
    let doubles: Vec<f64> = random_vec::<u32>(&mut rng, n).into_iter().map(|x| f64::from(x) / 7.0).collect();
    let bytes: Vec<u8> = random_vec::<u32>(&mut rng, 16 * n).into_iter().map(|x| x as u8).collect();
    let longs: Vec<i64> = random_vec::<u64>(&mut rng, 4 * n).into_iter().map(|x| x as i64).collect();
    let (mut os, mut od) = (gpu.zeros::<u16>(2 * n).unwrap(), gpu.zeros::<f64>(n).unwrap());
    let (mut ob, mut ol) = (gpu.zeros::<u8>(16 * n).unwrap(), gpu.zeros::<i64>(4 * n).unwrap());
    kernels::async_copy_widths::launch_with(
        gpu,
        &Launch::new().blocks(blocks as u32),
        &gpu.upload(&shorts).unwrap(),
        &gpu.upload(&doubles).unwrap(),
        &gpu.upload(&bytes).unwrap(),
        &gpu.upload(&longs).unwrap(),
        &mut os,
        &mut od,
        &mut ob,
        &mut ol,
    )
    .unwrap();
    // Thread t of each block holds the chunk of thread t + 1 (mod 32) of the same block.
    let moved = |width: usize, all: &[u64]| -> Vec<u64> {
        (0..n)
            .flat_map(|g| {
                let from = g / threads * threads + (g % threads + 1) % threads;
                all[from * width..from * width + width].to_vec()
            })
            .collect()
    };
    assert_eq!(
        gpu.download(&os).unwrap().iter().map(|&x| u64::from(x)).collect::<Vec<_>>(),
        moved(2, &shorts.iter().map(|&x| u64::from(x)).collect::<Vec<_>>()),
        "4-byte copies of u16 pairs"
    );
    assert_eq!(
        gpu.download(&od).unwrap().iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
        moved(1, &doubles.iter().map(|x| x.to_bits()).collect::<Vec<_>>()),
        "8-byte copies of f64"
    );
    assert_eq!(
        gpu.download(&ob).unwrap().iter().map(|&x| u64::from(x)).collect::<Vec<_>>(),
        moved(16, &bytes.iter().map(|&x| u64::from(x)).collect::<Vec<_>>()),
        "16-byte copies of u8"
    );
    assert_eq!(
        gpu.download(&ol).unwrap().iter().map(|&x| x as u64).collect::<Vec<_>>(),
        moved(4, &longs.iter().map(|&x| x as u64).collect::<Vec<_>>()),
        "32-byte copies of i64"
    );
}

/// An async copy whose source or target chunk runs past its array's end is an out-of-bounds
/// error at the chunk's last element, with bounds checks on, and copies nothing.
pub fn an_async_copy_past_the_end_is_out_of_bounds(gpu: &Gpu, _: Scale) {
    let keys = gpu.upload(&[5u32, 6, 7, 8, 9, 10]).unwrap();
    let launch = Launch::new().bounds_checks(true);
    let mut out = gpu.zeros::<u32>(8).unwrap();
    kernels::async_copy_past_the_end::launch_with(gpu, &launch, &keys, &mut out, 0, 1).unwrap();
    assert_eq!(gpu.download(&out).unwrap(), vec![1, 1, 1, 1, 5, 6, 7, 8]);
    for (c, d, array, index, len) in [(1, 0, "keys", 7, 6), (0, 2, "stage", 11, 8)] {
        let mut out = gpu.zeros::<u32>(8).unwrap();
        let error = kernels::async_copy_past_the_end::launch_with(gpu, &launch, &keys, &mut out, c, d)
            .expect_err("a chunk past the end");
        match &error {
            Error::OutOfBounds { array: a, index: i, len: l, .. } => {
                assert_eq!((a.as_str(), *i, *l), (array, index, len))
            }
            other => panic!("expected OutOfBounds, got {other:?}"),
        }
        assert_eq!(gpu.download(&out).unwrap(), vec![1; 8], "the skipped copy copies nothing");
    }
}

/// On the emulator, a copy's target holds neither its old elements nor the copied ones until
/// the issuing thread's wait (their complements), so a kernel that reads it too soon, or lets
/// another thread read it before the wait and a barrier, gets results that show it. Emulator
/// only: on a GPU the early read is a race.
pub fn the_emulator_shows_a_copy_in_flight_as_neither_old_nor_new(gpu: &Gpu) {
    let keys = [11u32, 12, 13, 14, 15];
    let (mut early, mut late) = (gpu.zeros::<u32>(4).unwrap(), gpu.zeros::<u32>(4).unwrap());
    kernels::async_copy_read_too_soon::launch(gpu, &gpu.upload(&keys).unwrap(), &mut early, &mut late).unwrap();
    assert_eq!(gpu.download(&early).unwrap(), vec![!11u32, !12, !13, !14], "before the wait");
    assert_eq!(gpu.download(&late).unwrap(), vec![11, 12, 13, 14], "after the wait");
}

/// On the emulator, a change to a copy's source while the copy is in flight (before the
/// issuing thread's wait), by that thread or another after a barrier, is an error naming the
/// source, the element and the copy's line, and the copy lands what it read at the issue; a
/// write past the copied chunk is none. Emulator only: on a GPU the copy may read the old value
/// or the new one.
pub fn the_emulator_refuses_a_write_to_a_copy_s_source_in_flight(gpu: &Gpu) {
    let keys = [11u32, 12, 13, 14, 15];
    let run = |writer: u32, at: usize| {
        let mut input = gpu.upload(&keys).unwrap();
        let mut out = gpu.zeros::<u32>(4).unwrap();
        let result = kernels::async_copy_source_written::launch(gpu, &mut input, &mut out, writer, at);
        (result, gpu.download(&out).unwrap())
    };
    let (result, out) = run(u32::MAX, 1);
    result.unwrap();
    assert_eq!(out, vec![11, 12, 13, 14], "no write: the copy lands");
    let (result, out) = run(0, 4);
    result.unwrap();
    assert_eq!(out, vec![11, 12, 13, 14], "a write past the chunk does not touch the copy");
    for (writer, at) in [(0, 1), (5, 2)] {
        let (result, out) = run(writer, at);
        match result {
            Err(Error::AsyncCopySourceWritten { array, index, line, .. }) if array == "keys" => {
                assert_eq!(index, at as u64, "thread {writer}: the element");
                assert!(line > 0, "the copy's line");
            }
            other => panic!("thread {writer}: expected AsyncCopySourceWritten at keys[{at}], got {other:?}"),
        }
        assert_eq!(out, vec![11, 12, 13, 14], "thread {writer}: the racy copy lands what it read at the issue");
    }
}
