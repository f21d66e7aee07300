//! Chunks: kernels that move slices and shared arrays with `load_chunk` and `store_chunk`,
//! their CPU references and the checks the emulator and GPU tests share.

use super::checks::{random_vec, rng, Scale};
use gsync::prelude::*;

#[gsync::kernels]
pub mod kernels {
    /// Each chunk of four keys into its running sums, and the keys past the last whole chunk
    /// one by one; across a grid_sync, each chunk again into `twice` from `out`.
    #[grid_phases]
    pub fn chunk_sums(keys: &[u32], out: &mut [u32], twice: &mut [u32]) {
        let whole = keys.len() / 4;
        for c in grid_stride(0..whole) {
            let v = keys.load_chunk::<4>(c);
            let mut sums = [0u32; 4];
            let mut running = 0u32;
            for j in 0..4 {
                running = running.wrapping_add(v[j]);
                sums[j] = running;
            }
            out.store_chunk(c, sums);
        }
        for i in grid_stride(whole * 4..keys.len()) {
            out[i] = keys[i];
        }
        grid_sync();
        for c in grid_stride(0..whole) {
            let v: [u32; 4] = out.load_chunk(c);
            let mut doubled = [0u32; 4];
            for j in 0..4 {
                doubled[j] = v[j].wrapping_mul(2);
            }
            twice.store_chunk::<4>(c, doubled);
        }
    }

    /// Chunks of every width: 16 bytes reversed, two `f64`s swapped, four `i64`s (two
    /// 16-byte pieces) negated, two `u16`s (4 bytes) and one `u8` copied; and through a shared
    /// array and a shared slice, each thread's chunk read back by another after a
    /// `sync_block()`.
    #[grid_phases(threads = 64)]
    pub fn chunk_widths(
        bytes: &[u8],
        doubles: &[f64],
        longs: &[i64],
        shorts: &[u16],
        halves: &[f16],
        out_bytes: &mut [u8],
        out_doubles: &mut [f64],
        out_longs: &mut [i64],
        out_shorts: &mut [u16],
        out_halves: &mut [f16],
        out_words: &mut [u32],
    ) {
        for c in grid_stride(0..bytes.len() / 16) {
            let v = bytes.load_chunk::<16>(c);
            let mut r = [0u8; 16];
            for j in 0..16 {
                r[j] = v[15 - j];
            }
            out_bytes.store_chunk(c, r);
        }
        for c in grid_stride(0..doubles.len() / 2) {
            let v = doubles.load_chunk::<2>(c);
            let r = [v[1], v[0]];
            out_doubles.store_chunk(c, r);
        }
        for c in grid_stride(0..longs.len() / 4) {
            let mut v = longs.load_chunk::<4>(c);
            for j in 0..4 {
                v[j] = v[j].wrapping_neg();
            }
            out_longs.store_chunk(c, v);
        }
        for c in grid_stride(0..shorts.len() / 2) {
            let v = shorts.load_chunk::<2>(c);
            out_shorts.store_chunk(c, v);
        }
        for c in grid_stride(0..halves.len() / 8) {
            let v = halves.load_chunk::<8>(c);
            let mut r = [v[0]; 8];
            for j in 0..8 {
                r[j] = v[7 - j];
            }
            out_halves.store_chunk(c, r);
        }
        let mut tile = shared_array::<u32, 256>();
        // `words` starts 16 bytes into the dynamic shared memory, after `flags`' 3 bytes.
        let mut flags = shared_slice::<u8>(3);
        let mut words = shared_slice::<u32>(256);
        let t = thread_idx() as usize;
        let mine = [global_id(), global_id() * 3, global_id() ^ 0x55, 7];
        tile.store_chunk(t, mine);
        words.store_chunk(t, mine);
        if t < 3 {
            flags[t] = 1;
        }
        sync_block();
        let theirs = tile.load_chunk::<4>((t + 1) % 64);
        let single = bytes.load_chunk::<1>(0);
        let moved = [theirs[0], theirs[1], theirs[2], theirs[3] + single[0] as u32];
        out_words.store_chunk(2 * global_id() as usize, moved);
        let next = words.load_chunk::<4>((t + 2) % 64);
        let flagged = [next[0], next[1], next[2], next[3] + flags[t % 3] as u32];
        out_words.store_chunk(2 * global_id() as usize + 1, flagged);
    }

    /// Each pair of `a` swapped into `b`, for any element type: chunks of 2 to 16 bytes.
    #[grid_phases]
    pub fn swap_pairs<T: Num>(a: &[T], b: &mut [T]) {
        for c in grid_stride(0..a.len() / 2) {
            let v = a.load_chunk::<2>(c);
            let swapped = [v[1], v[0]];
            b.store_chunk(c, swapped);
        }
    }

    /// `a`'s chunk `c` weighted by position, whichever array `a` is.
    #[device]
    fn weigh(a: &[u32], c: u32) -> u32 {
        let v = a.load_chunk::<4>(c);
        v[0] + 2 * v[1] + 3 * v[2] + 4 * v[3]
    }

    /// Chunks through a device function (of a shared array and of a thread's own array,
    /// indexed by `u32`), and a chunk whose index takes a ticket with an atomic.
    #[grid_phases(threads = 32)]
    pub fn chunks_through_functions(keys: &[u32], tickets: &mut [u32], weighted: &mut [u32], taken: &mut [u32]) {
        let t = thread_idx();
        let mut tile = shared_array::<u32, 128>();
        let held = [t, t + 1, t + 2, t + 3];
        tile.store_chunk(t, held);
        sync_block();
        let g = global_id() as usize;
        weighted[2 * g] = weigh(&tile, (t + 1) % 32);
        weighted[2 * g + 1] = weigh(&held, 0);
        // Chunk `c` of `keys` starts with `4 · c`: it goes back to its own place in `taken`.
        let chunk = keys.load_chunk::<4>(tickets.atomic_add(0, 1) as usize);
        taken.store_chunk(chunk[0] as usize / 4, chunk);
    }

    /// `rounds` times, each chunk of `cur` plus one into `next`, then the two trade places.
    #[grid_phases]
    pub fn chunk_ping_pong(mut cur: &mut [u32], mut next: &mut [u32], rounds: u32) {
        for _ in 0..rounds {
            for c in grid_stride(0..cur.len() / 4) {
                let v = cur.load_chunk::<4>(c);
                let mut w = [0u32; 4];
                for j in 0..4 {
                    w[j] = v[j] + 1;
                }
                next.store_chunk(c, w);
            }
            grid_sync();
            std::mem::swap(&mut cur, &mut next);
        }
    }

    /// Loads chunk `c` of `keys` (out of bounds where `keys` ends inside it) and stores it
    /// as chunk `d` of `out`.
    #[grid_phases(threads = 32)]
    pub fn chunk_past_the_end(keys: &[u32], out: &mut [u32], c: usize, d: usize) {
        if global_id() == 0 {
            let v = keys.load_chunk::<4>(c);
            out.store_chunk(d, v);
        }
    }
}

pub fn chunk_kernels() -> Vec<&'static gsync::KernelSpec> {
    vec![
        &kernels::chunk_sums::KERNEL,
        &kernels::chunk_widths::KERNEL,
        &kernels::chunk_past_the_end::KERNEL,
        &kernels::chunks_through_functions::KERNEL,
        &kernels::chunk_ping_pong::KERNEL,
        &kernels::swap_pairs::__u8::KERNEL,
        &kernels::swap_pairs::__i16::KERNEL,
        &kernels::swap_pairs::__f32::KERNEL,
        &kernels::swap_pairs::__f64::KERNEL,
    ]
}

/// Checks `swap_pairs` on `input`, whose last element (of an odd length) stays `zero`.
fn swap_pairs_of<T: kernels::swap_pairs::Element + PartialEq + std::fmt::Debug>(gpu: &Gpu, input: Vec<T>, zero: T) {
    let n = input.len();
    let mut expected: Vec<T> =
        input.chunks(2).flat_map(|c| if c.len() == 2 { vec![c[1], c[0]] } else { vec![] }).collect();
    expected.resize(n, zero);
    let mut out = gpu.zeros::<T>(n).unwrap();
    kernels::swap_pairs::launch(gpu, &gpu.upload(&input).unwrap(), &mut out).unwrap();
    assert_eq!(gpu.download(&out).unwrap(), expected, "{}", std::any::type_name::<T>());
}

/// A generic kernel's chunks follow its element type: 2, 4, 8 and 16 bytes.
pub fn a_generic_kernel_moves_chunks_of_every_element_type(gpu: &Gpu, scale: Scale) {
    let n = scale.pick(100_001, 999);
    let small: Vec<u32> = random_vec::<u32>(&mut rng(), n).into_iter().map(|x| x % 100 + 1).collect();
    swap_pairs_of(gpu, small.iter().map(|&x| x as u8).collect(), 0);
    swap_pairs_of(gpu, small.iter().map(|&x| -(x as i16)).collect(), 0);
    swap_pairs_of(gpu, small.iter().map(|&x| x as f32 / 3.0).collect(), 0.0);
    swap_pairs_of(gpu, small.iter().map(|&x| f64::from(x) / 7.0).collect(), 0.0);
}

/// Chunks of four keys scanned and doubled match the CPU, with a tail of keys past the last
/// whole chunk, under every barrier (MultiLaunch keeps `out` between the two phases).
pub fn chunks_of_four_keys_match_the_cpu(gpu: &Gpu, scale: Scale) {
    let n = scale.pick((1 << 20) + 3, 4099);
    let keys: Vec<u32> = random_vec(&mut rng(), n);
    let mut sums = keys.clone();
    for chunk in sums[..n / 4 * 4].chunks_mut(4) {
        for j in 1..4 {
            chunk[j] = chunk[j].wrapping_add(chunk[j - 1]);
        }
    }
    let mut twice: Vec<u32> = sums.iter().map(|s| s.wrapping_mul(2)).collect();
    twice[n / 4 * 4..].fill(0);
    let input = gpu.upload(&keys).unwrap();
    for &barrier in Barrier::ALL {
        let (mut out, mut doubled) = (gpu.zeros::<u32>(n).unwrap(), gpu.zeros::<u32>(n).unwrap());
        kernels::chunk_sums::launch_with(gpu, &Launch::new().barrier(barrier), &input, &mut out, &mut doubled).unwrap();
        assert!(gpu.download(&out).unwrap() == sums, "{barrier:?}: the chunks' sums differ from the CPU's");
        assert!(gpu.download(&doubled).unwrap() == twice, "{barrier:?}: the doubled chunks differ from the CPU's");
    }
}

/// Chunks of 1, 4, 16 and 32 bytes, of global slices and of a shared array, move every
/// element where Rust would.
pub fn chunks_of_every_width_move_every_element(gpu: &Gpu, scale: Scale) {
    let mut rng = rng();
    let n = scale.pick(1 << 16, 512);
    let bytes: Vec<u8> = random_vec::<u32>(&mut rng, n).into_iter().map(|x| x as u8).collect();
    let doubles: Vec<f64> = random_vec::<u32>(&mut rng, n).into_iter().map(|x| f64::from(x) / 7.0).collect();
    let longs: Vec<i64> = random_vec::<u64>(&mut rng, n).into_iter().map(|x| x as i64).collect();
    let shorts: Vec<u16> = random_vec::<u32>(&mut rng, n).into_iter().map(|x| x as u16).collect();
    let halves: Vec<f16> =
        random_vec::<u32>(&mut rng, n).into_iter().map(|x| f16::from_bits(x as u16 & 0x7bff)).collect();
    let blocks = 3u32;
    let threads = 64usize;
    let (mut ob, mut od) = (gpu.zeros::<u8>(n).unwrap(), gpu.zeros::<f64>(n).unwrap());
    let (mut ol, mut os) = (gpu.zeros::<i64>(n).unwrap(), gpu.zeros::<u16>(n).unwrap());
    let mut oh = gpu.zeros::<f16>(n).unwrap();
    let mut ow = gpu.zeros::<u32>(8 * threads * blocks as usize).unwrap();
    let launch = Launch::new().blocks(blocks);
    kernels::chunk_widths::launch_with(
        gpu,
        &launch,
        &gpu.upload(&bytes).unwrap(),
        &gpu.upload(&doubles).unwrap(),
        &gpu.upload(&longs).unwrap(),
        &gpu.upload(&shorts).unwrap(),
        &gpu.upload(&halves).unwrap(),
        &mut ob,
        &mut od,
        &mut ol,
        &mut os,
        &mut oh,
        &mut ow,
    )
    .unwrap();
    let reversed: Vec<u8> = bytes.chunks(16).flat_map(|c| c.iter().rev().copied()).collect();
    let swapped: Vec<u64> = doubles.chunks(2).flat_map(|c| [c[1].to_bits(), c[0].to_bits()]).collect();
    let negated: Vec<i64> = longs.iter().map(|x| x.wrapping_neg()).collect();
    assert_eq!(gpu.download(&ob).unwrap(), reversed, "16-byte chunks of u8");
    assert_eq!(gpu.download(&od).unwrap().iter().map(|x| x.to_bits()).collect::<Vec<_>>(), swapped, "f64 pairs");
    assert_eq!(gpu.download(&ol).unwrap(), negated, "32-byte chunks of i64");
    assert_eq!(gpu.download(&os).unwrap(), shorts, "4-byte chunks of u16");
    let flipped: Vec<u16> = halves.chunks(8).flat_map(|c| c.iter().rev().map(|h| h.to_bits())).collect();
    assert_eq!(gpu.download(&oh).unwrap().iter().map(|h| h.to_bits()).collect::<Vec<_>>(), flipped, "f16 chunks");
    let chunk = |g: usize, ahead: usize, last: u32| {
        let id = ((g / threads) * threads + (g % threads + ahead) % threads) as u32;
        [id, id * 3, id ^ 0x55, 7 + last]
    };
    let words: Vec<u32> = (0..blocks as usize * threads)
        .flat_map(|g| [chunk(g, 1, u32::from(bytes[0])), chunk(g, 2, 1)])
        .flatten()
        .collect();
    assert_eq!(gpu.download(&ow).unwrap(), words, "chunks through a shared array and a shared slice");
}

/// A chunk that runs past the end of its slice is an out-of-bounds error at its first
/// element, with bounds checks on, and is read as zeros.
pub fn a_chunk_past_the_end_is_out_of_bounds(gpu: &Gpu, _: Scale) {
    let keys = gpu.upload(&[5u32, 6, 7, 8, 9, 10]).unwrap();
    let launch = Launch::new().bounds_checks(true);
    let mut out = gpu.zeros::<u32>(6).unwrap();
    kernels::chunk_past_the_end::launch_with(gpu, &launch, &keys, &mut out, 0, 0).unwrap();
    assert_eq!(gpu.download(&out).unwrap(), vec![5, 6, 7, 8, 0, 0]);
    let mut out = gpu.upload(&[1u32; 6]).unwrap();
    let error = kernels::chunk_past_the_end::launch_with(gpu, &launch, &keys, &mut out, 1, 0)
        .expect_err("elements 4..8 of 6 are past the end");
    match &error {
        Error::OutOfBounds { array, index, len, .. } => assert_eq!((array.as_str(), *index, *len), ("keys", 7, 6)),
        other => panic!("expected OutOfBounds, got {other:?}"),
    }
    assert_eq!(gpu.download(&out).unwrap(), vec![0, 0, 0, 0, 1, 1], "the skipped load reads zeros");
    let mut out = gpu.upload(&[1u32; 6]).unwrap();
    let error = kernels::chunk_past_the_end::launch_with(gpu, &launch, &keys, &mut out, 0, 1)
        .expect_err("elements 4..8 of 6 are past the end");
    match &error {
        Error::OutOfBounds { array, index, len, .. } => assert_eq!((array.as_str(), *index, *len), ("out", 7, 6)),
        other => panic!("expected OutOfBounds, got {other:?}"),
    }
    assert_eq!(gpu.download(&out).unwrap(), vec![1; 6], "the skipped store writes nothing");
}

/// Chunks through a device function, of a shared array and of a thread's own array; a chunk
/// whose index takes an atomic ticket; chunks of slices that trade places, under every barrier.
pub fn chunks_pass_through_functions_and_swaps(gpu: &Gpu, scale: Scale) {
    let blocks = 3usize;
    let n = 4 * 32 * blocks;
    let keys: Vec<u32> = (0..n as u32).map(|k| k / 4 * 4 + k % 4 * 1000).collect();
    let mut tickets = gpu.zeros::<u32>(1).unwrap();
    let mut weighted = gpu.zeros::<u32>(2 * 32 * blocks).unwrap();
    let mut taken = gpu.zeros::<u32>(n).unwrap();
    let launch = Launch::new().blocks(blocks as u32);
    kernels::chunks_through_functions::launch_with(
        gpu,
        &launch,
        &gpu.upload(&keys).unwrap(),
        &mut tickets,
        &mut weighted,
        &mut taken,
    )
    .unwrap();
    let weigh = |v: [u32; 4]| v[0] + 2 * v[1] + 3 * v[2] + 4 * v[3];
    let expected: Vec<u32> = (0..32 * blocks as u32)
        .flat_map(|g| {
            let (t, next) = (g % 32, (g % 32 + 1) % 32);
            [weigh([next, next + 1, next + 2, next + 3]), weigh([t, t + 1, t + 2, t + 3])]
        })
        .collect();
    assert_eq!(gpu.download(&weighted).unwrap(), expected, "chunks through a device function");
    assert_eq!(gpu.download(&taken).unwrap(), keys, "every ticket's chunk, once");
    let n = scale.pick(1 << 16, 1000) + 2;
    let start: Vec<u32> = random_vec::<u32>(&mut rng(), n).into_iter().map(|x| x % 1000).collect();
    for &barrier in Barrier::ALL {
        let rounds = 5u32;
        let mut cur = gpu.upload(&start).unwrap();
        let mut next = gpu.zeros::<u32>(n).unwrap();
        kernels::chunk_ping_pong::launch_with(gpu, &Launch::new().barrier(barrier), &mut cur, &mut next, rounds)
            .unwrap();
        let whole = n / 4 * 4;
        let mut expected: Vec<u32> = start.iter().map(|x| x + rounds).collect();
        // The two keys past the last chunk stay where they were: in `cur`'s buffer, which the
        // odd number of rounds leaves in `next`.
        expected[whole..].fill(0);
        assert_eq!(gpu.download(&next).unwrap(), expected, "{barrier:?}: after {rounds} rounds");
    }
}
