//! `put_range` and `put_range_signal`: kernels that copy ranges into other PEs' parts of
//! symmetric slices, their CPU references, and checks that run on a PE of any team (a GPU in
//! no team being PE 0 of 1); `tests/team.rs` runs them on emulated teams.

use gsync::prelude::*;
use gsync::Result;

#[gsync::kernels]
pub mod kernels {
    /// Block `b` copies its range of `src`, `b·len .. (b + 1)·len`, into the next PE's `out`
    /// from `b·len + shift`: after the spanning barrier, each PE's `out` holds the previous
    /// PE's `src`, `shift` places on, for any element type.
    #[grid_phases]
    pub fn ring_ranges<T: Num>(#[symmetric] out: &mut [T], src: &[T], len: usize, shift: usize) {
        let next = (pe() + 1) % n_pes();
        let b = block_idx() as usize;
        out.put_range(next, b * len + shift, &src[b * len..(b + 1) * len]);
        grid_sync();
    }

    /// The whole of `src` into the next PE's `out`, for half precision, which `Num` leaves out.
    #[grid_phases]
    pub fn ring_halves(#[symmetric] out: &mut [f16], src: &[f16]) {
        out.put_range((pe() + 1) % n_pes(), 0, &src[..]);
        grid_sync();
    }

    /// `steps` steps of `u' = (u[i − w] + 2·u[i] + u[i + w]) / 4` on a line of cells cut into
    /// one strip of `cells` per PE, each run by one block. `planes` holds two planes of
    /// `w + cells + w`: the strip between a halo of `w` cells on each side. After a step, a block
    /// hands its first and last `w` cells to its neighbours' halos with `put_range_signal`,
    /// raising their `arrived` flag (0: from the left, 1: from the right) to the step's
    /// number, and waits for its own flags to reach it: no grid barrier.
    #[grid_phases]
    pub fn halo_steps(
        #[symmetric] planes: &mut [u32],
        #[symmetric] arrived: &mut [u64],
        cells: usize,
        w: usize,
        steps: u32,
    ) {
        let plane = cells + 2 * w;
        let left = pe() > 0;
        let right = pe() + 1 < n_pes();
        for s in 0..steps {
            let from = (s as usize % 2) * plane;
            let to = ((s as usize + 1) % 2) * plane;
            for i in block_stride(w..w + cells) {
                planes[to + i] = (planes[from + i - w] + 2 * planes[from + i] + planes[from + i + w]) / 4;
            }
            sync_block(); // the block's strip, before its edges go out
            let round = s as u64 + 1;
            if left {
                // Its first cells, into the left neighbour's right halo.
                planes.put_range_signal(pe() - 1, to + w + cells, &planes[to + w..to + 2 * w], arrived, 1, round);
            }
            if right {
                planes.put_range_signal(pe() + 1, to, &planes[to + cells..to + cells + w], arrived, 0, round);
            }
            if thread_idx() == 0 {
                if left {
                    wait_until(|| arrived.load_signal(0) >= round);
                }
                if right {
                    wait_until(|| arrived.load_signal(1) >= round);
                }
            }
            sync_block(); // what the first thread acquired, for the whole block
        }
    }

    /// `a.put_range(pe, at, &src[lo..hi])` from every block, with the operands as given.
    #[grid_phases]
    pub fn put_range_as_given(#[symmetric] a: &mut [u32], src: &[u32], pe: u32, at: usize, lo: usize, hi: usize) {
        a.put_range(pe, at, &src[lo..hi]);
    }

    /// The block copies `src` into this PE's own `a`, then each thread counts the elements of
    /// `a` that do not hold `src`'s yet: the block barrier that ends `put_range` leaves none.
    #[grid_phases]
    pub fn reads_after_the_copy(#[symmetric] a: &mut [u32], src: &[u32], misses: &mut [u32]) {
        a.put_range(pe(), 0, &src[..]);
        for i in 0..src.len() {
            if a[i] != src[i] {
                misses.atomic_add(0, 1);
            }
        }
    }

    /// Each block fills a shared tile with its numbers and copies the whole tile into the next
    /// PE's `out`, at its place: `out[b·128 + i]` holds `(b·128 + i)² + PE` of the PE before.
    #[grid_phases]
    pub fn tiles_to_the_next(#[symmetric] out: &mut [u64]) {
        let mut tile = shared_array::<u64, 128>();
        let b = block_idx() as usize;
        for i in block_stride(0..128) {
            let k = (b * 128 + i) as u64;
            tile[i] = k * k + pe() as u64;
        }
        sync_block();
        out.put_range((pe() + 1) % n_pes(), b * 128, &tile[..]);
        grid_sync();
    }
}

/// Runs `ring_ranges` on this PE for `src` (3 blocks of `len`) under `barrier` and checks its
/// `out` against the previous PE's `src`, bit for bit; `src_of(pe)` makes each PE's.
pub fn ring_ranges_match_the_cpu<T>(gpu: &Gpu, barrier: Barrier, src_of: impl Fn(u32) -> Vec<T>) -> Result<()>
where
    T: kernels::ring_ranges::Element + Copy + Default + PartialEq + std::fmt::Debug,
{
    let (blocks, shift) = (3usize, 7usize);
    let src = src_of(gpu.pe());
    let len = src.len() / blocks;
    let mut out = gpu.symmetric_zeros::<T>(src.len() + shift)?;
    let launch = Launch::new().barrier(barrier).blocks(blocks as u32).threads(32);
    kernels::ring_ranges::launch_with(gpu, &launch, &mut out, &gpu.upload(&src)?, len, shift)?;
    let before = src_of((gpu.pe() + gpu.n_pes() - 1) % gpu.n_pes());
    let mut expected = vec![T::default(); src.len() + shift];
    expected[shift..shift + blocks * len].copy_from_slice(&before[..blocks * len]);
    let out = gpu.download(&out)?;
    let same = out.len() == expected.len() && out.iter().zip(&expected).all(|(a, b)| bits(a) == bits(b));
    assert!(same, "PE {} of {}: {out:?}\nexpected {expected:?}", gpu.pe(), gpu.n_pes());
    Ok(())
}

/// `ring_halves`: each PE's `out` holds the previous PE's bits, NaN payloads included.
pub fn half_ranges_keep_their_bits(gpu: &Gpu) -> Result<()> {
    let bits_of = |pe: u32| -> Vec<u16> { (0..100u16).map(|i| i.wrapping_mul(659) ^ (pe as u16) << 12).collect() };
    let src: Vec<f16> = bits_of(gpu.pe()).into_iter().map(f16::from_bits).collect();
    let mut out = gpu.symmetric_zeros::<f16>(src.len())?;
    kernels::ring_halves::launch_with(gpu, &Launch::new().blocks(2).threads(32), &mut out, &gpu.upload(&src)?)?;
    let got: Vec<u16> = gpu.download(&out)?.into_iter().map(f16::to_bits).collect();
    assert_eq!(got, bits_of((gpu.pe() + gpu.n_pes() - 1) % gpu.n_pes()), "PE {}", gpu.pe());
    Ok(())
}

/// An element's bytes, so that floats compare bit for bit (NaN payloads, `-0.0`).
fn bits<T: Copy>(x: &T) -> Vec<u8> {
    // SAFETY: the elements are plain scalars, every byte of which is initialised.
    unsafe { std::slice::from_raw_parts((x as *const T).cast::<u8>(), std::mem::size_of::<T>()).to_vec() }
}

/// `halo_steps` on this PE's strip of a line of `n_pes · cells` cells, `w` fixed cells at
/// each end: the strip's cells after `steps` steps.
pub fn halo_steps_on(gpu: &Gpu, line: &[u32], cells: usize, w: usize, steps: u32) -> Result<Vec<u32>> {
    let plane = cells + 2 * w;
    let first = gpu.pe() as usize * cells; // the strip's first cell in `line`, past its `w` fixed cells
    let held = &line[first..first + plane];
    let mut host = held.to_vec();
    host.extend_from_slice(held);
    let mut planes = gpu.symmetric_upload(&host)?;
    let mut arrived = gpu.symmetric_zeros::<u64>(2)?;
    let launch = Launch::new().blocks(1).threads(64);
    kernels::halo_steps::launch_with(gpu, &launch, &mut planes, &mut arrived, cells, w, steps)?;
    let at = (steps as usize % 2) * plane + w;
    Ok(gpu.download(&planes)?[at..at + cells].to_vec())
}

/// `halo_steps`' rule on the whole line (its `w` cells at each end fixed), on the CPU.
pub fn halo_steps_reference(line: &[u32], w: usize, steps: u32) -> Vec<u32> {
    let mut now = line.to_vec();
    for _ in 0..steps {
        let mut next = now.clone();
        for i in w..now.len() - w {
            next[i] = (now[i - w] + 2 * now[i] + now[i + w]) / 4;
        }
        now = next;
    }
    now
}

/// `tiles_to_the_next` on 3 blocks under `barrier`: each PE holds the previous PE's tiles.
pub fn shared_tiles_reach_the_next_pe(gpu: &Gpu, barrier: Barrier) -> Result<()> {
    let blocks = 3u32;
    let mut out = gpu.symmetric_zeros::<u64>(128 * blocks as usize)?;
    let launch = Launch::new().barrier(barrier).blocks(blocks).threads(32);
    kernels::tiles_to_the_next::launch_with(gpu, &launch, &mut out)?;
    let before = u64::from((gpu.pe() + gpu.n_pes() - 1) % gpu.n_pes());
    let expected: Vec<u64> = (0..128 * u64::from(blocks)).map(|k| k * k + before).collect();
    assert_eq!(gpu.download(&out)?, expected, "PE {}", gpu.pe());
    Ok(())
}

/// `reads_after_the_copy` on one block: every thread sees the whole copy after it.
pub fn the_block_sees_its_copy_after_put_range(gpu: &Gpu) -> Result<()> {
    let src: Vec<u32> = (0..200).map(|i| i * 3 + 1).collect();
    let mut a = gpu.symmetric_zeros::<u32>(src.len())?;
    let mut misses = gpu.zeros::<u32>(1)?;
    let launch = Launch::new().blocks(1).threads(64);
    kernels::reads_after_the_copy::launch_with(gpu, &launch, &mut a, &gpu.upload(&src)?, &mut misses)?;
    assert_eq!(gpu.download(&misses)?, [0], "PE {}: threads read elements the block had not copied", gpu.pe());
    assert_eq!(gpu.download(&a)?, src);
    Ok(())
}

/// `put_range_as_given` with checked bounds on an 8-element `a` and a 6-element `src`: the
/// launch's error, and `a` after it.
pub fn put_range_fault(gpu: &Gpu, pe: u32, at: usize, lo: usize, hi: usize) -> Result<(Error, Vec<u32>)> {
    let mut a = gpu.symmetric_zeros::<u32>(8)?;
    let src = gpu.upload(&[1u32, 2, 3, 4, 5, 6])?;
    let launch = Launch::new().blocks(2).threads(32).bounds_checks(true);
    let error = match kernels::put_range_as_given::launch_with(gpu, &launch, &mut a, &src, pe, at, lo, hi) {
        Ok(_) => panic!("put_range({pe}, {at}, &src[{lo}..{hi}]) ran without a fault"),
        Err(error) => error,
    };
    Ok((error, gpu.download(&a)?))
}

/// Every range `put_range_as_given` must refuse, checked on this PE: the fault names the slice,
/// the index and the length as the GPU's status word does, and nothing is copied.
pub fn range_faults_are_out_of_bounds_and_copy_nothing(gpu: &Gpu) -> Result<()> {
    let (me, n_pes) = (gpu.pe(), gpu.n_pes());
    let cases: [(usize, usize, usize, &str, u64, u64); 5] = [
        (0, 4, 7, "src", 6, 6),               // the source's end past its length: its last element
        (0, 5, 3, "src", 5, 3),               // a range that starts past its end: its start against its end
        (5, 0, 4, "a", 8, 8),                 // the target's end past its length
        (9, 2, 2, "a", 9, 8),                 // an empty range from past the target's end
        (usize::MAX, 0, 2, "a", u64::MAX, 8), // `at + (hi − lo)` past `usize::MAX`: no wrap-around
    ];
    for (at, lo, hi, array, index, len) in cases {
        let (error, a) = put_range_fault(gpu, me, at, lo, hi)?;
        let shown = error.to_string();
        match &error {
            Error::OutOfBounds { array: named, index: i, len: l, .. } if named == array && (*i, *l) == (index, len) => {
            }
            _ => panic!("put_range(pe, {at}, &src[{lo}..{hi}]) on PE {me} of {n_pes}: {shown}"),
        }
        assert_eq!(a, [0; 8], "the copy of &src[{lo}..{hi}] at {at} was skipped");
    }
    let (error, a) = put_range_fault(gpu, n_pes, 0, 0, 4)?;
    assert!(
        matches!(&error, Error::NoSuchPe { pe, n_pes: n, .. } if *pe == u64::from(n_pes) && *n == n_pes),
        "{error}"
    );
    assert!(error.to_string().contains("`a` on line"), "{error}");
    assert_eq!(a, [0; 8], "nothing was copied to a PE out of the team");
    Ok(())
}
