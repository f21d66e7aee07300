//! Slices as values: kernels whose slice parameters trade places with
//! `std::mem::swap`, their CPU references and the checks the emulator and
//! GPU tests share.

use super::checks::{random_vec, rng, Scale};
use gsync::prelude::*;

#[gsync::kernels]
pub mod kernels {
    /// `steps` rounds of a 3-point smoothing with fixed ends, written once: each
    /// round reads `cur` and writes `next`, then the two trade places. The result
    /// is in `cur`'s buffer after an even number of rounds, else in `next`'s.
    #[grid_phases]
    pub fn ping_pong(mut cur: &mut [f32], mut next: &mut [f32], steps: u32) {
        let n = cur.len();
        for _ in 0..steps {
            for i in grid_stride(0..n) {
                next[i] =
                    if i == 0 || i + 1 == n { cur[i] } else { 0.25 * cur[i - 1] + 0.5 * cur[i] + 0.25 * cur[i + 1] };
            }
            grid_sync();
            std::mem::swap(&mut cur, &mut next);
        }
    }

    /// Swaps read-only slices of different lengths under a condition the host
    /// evaluates, and between per-thread statements of one phase: `out[r]` holds
    /// the length and a sum of whichever slice `a` names in round `r`.
    #[grid_phases]
    pub fn trade_places(mut a: &[u32], mut b: &[u32], out: &mut [u64], rounds: u32) {
        for r in 0..rounds as usize {
            if r % 3 != 1 {
                core::mem::swap(&mut a, &mut b);
            }
            if global_id() == 0 {
                out[2 * r] = a.len() as u64;
            }
            std::mem::swap(&mut a, &mut b);
            if global_id() == 0 {
                let mut sum = 0u64;
                for i in 0..b.len() {
                    sum += b[i] as u64;
                }
                out[2 * r + 1] = sum;
            }
            grid_sync();
        }
    }

    /// A swap inside a per-thread `if`: fused barriers run it, MultiLaunch cannot
    /// (it swaps on the host, between launches).
    #[grid_phases]
    pub fn swap_among_thread_work(mut a: &mut [u32], mut b: &mut [u32], rounds: u32) {
        for r in 0..rounds {
            if r % 2 == 0 {
                for i in grid_stride(0..a.len()) {
                    a[i] += 1;
                }
                std::mem::swap(&mut a, &mut b);
            }
            grid_sync();
        }
    }

    /// Scalars trade values per thread, under any control.
    #[grid_phases]
    pub fn sorted_pairs(a: &[u32], out: &mut [u32]) {
        for i in grid_stride(0..a.len() / 2) {
            let mut low = a[2 * i];
            let mut high = a[2 * i + 1];
            if low > high {
                std::mem::swap(&mut low, &mut high);
            }
            out[2 * i] = low;
            out[2 * i + 1] = high;
        }
    }
}

fn smooth_reference(mut cur: Vec<f32>, steps: u32) -> Vec<f32> {
    let n = cur.len();
    let mut next = vec![0.0; n];
    for _ in 0..steps {
        for i in 0..n {
            next[i] = if i == 0 || i + 1 == n { cur[i] } else { 0.25 * cur[i - 1] + 0.5 * cur[i] + 0.25 * cur[i + 1] };
        }
        std::mem::swap(&mut cur, &mut next);
    }
    cur
}

/// A ping-pong loop written once matches the CPU bit for bit under every barrier
/// (MultiLaunch swaps the buffers on the host), for odd and even round counts.
pub fn a_ping_pong_loop_swaps_its_slices(gpu: &Gpu, scale: Scale) {
    let n = scale.pick(1 << 18, 3001);
    let input: Vec<f32> = random_vec(&mut rng(), n).into_iter().map(|x: u32| (x % 1000) as f32).collect();
    for &barrier in Barrier::ALL {
        for steps in [5u32, 6] {
            let mut cur = gpu.upload(&input).unwrap();
            let mut next = gpu.zeros::<f32>(n).unwrap();
            let launch = Launch::new().barrier(barrier);
            kernels::ping_pong::launch_with(gpu, &launch, &mut cur, &mut next, steps).unwrap();
            let result = if steps % 2 == 0 { &cur } else { &next };
            let expected = smooth_reference(input.clone(), steps);
            let got = gpu.download(result).unwrap();
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert!(bits(&got) == bits(&expected), "{barrier:?}, {steps} steps: the field differs from the CPU's");
        }
    }
}

/// Swapped slices carry their lengths; a swap between per-thread statements
/// takes effect between them, under every barrier.
pub fn swapped_slices_carry_their_lengths(gpu: &Gpu, _: Scale) {
    let (a, b): (Vec<u32>, Vec<u32>) = ((1..=5).collect(), (100..109).collect());
    let rounds = 7u32;
    let mut expected = Vec::new();
    let (mut x, mut y) = (&a, &b);
    for r in 0..rounds {
        if r % 3 != 1 {
            std::mem::swap(&mut x, &mut y);
        }
        expected.push(x.len() as u64);
        std::mem::swap(&mut x, &mut y);
        expected.push(y.iter().map(|&v| v as u64).sum());
    }
    let (da, db) = (gpu.upload(&a).unwrap(), gpu.upload(&b).unwrap());
    for &barrier in Barrier::ALL {
        let mut out = gpu.zeros::<u64>(2 * rounds as usize).unwrap();
        kernels::trade_places::launch_with(gpu, &Launch::new().barrier(barrier), &da, &db, &mut out, rounds).unwrap();
        assert_eq!(gpu.download(&out).unwrap(), expected, "{barrier:?}");
    }
}

/// `std::mem::swap` of two scalars exchanges their values.
/// The kernels here, for the codegen test.
pub fn swap_kernels() -> Vec<&'static gsync::KernelSpec> {
    vec![
        &kernels::ping_pong::KERNEL,
        &kernels::trade_places::KERNEL,
        &kernels::swap_among_thread_work::KERNEL,
        &kernels::sorted_pairs::KERNEL,
    ]
}

pub fn scalars_swap_per_thread(gpu: &Gpu, scale: Scale) {
    let a: Vec<u32> = random_vec(&mut rng(), scale.pick(1 << 16, 1000));
    let mut out = gpu.zeros::<u32>(a.len()).unwrap();
    kernels::sorted_pairs::launch(gpu, &gpu.upload(&a).unwrap(), &mut out).unwrap();
    let expected: Vec<u32> = a.chunks(2).flat_map(|p| [p[0].min(p[1]), p[0].max(p[1])]).collect();
    assert_eq!(gpu.download(&out).unwrap(), expected);
}

/// A swap among per-thread statements runs under fused barriers, and
/// MultiLaunch refuses it with a reason instead of swapping at the wrong time.
pub fn a_swap_among_thread_work_is_not_split(gpu: &Gpu, scale: Scale) {
    let n = scale.pick(1 << 16, 500);
    let (mut a, mut b) = (gpu.zeros::<u32>(n).unwrap(), gpu.zeros::<u32>(n).unwrap());
    kernels::swap_among_thread_work::launch(gpu, &mut a, &mut b, 5).unwrap();
    // Rounds 0, 2 and 4 add one to whichever buffer `a` names: A, then B, then A.
    assert_eq!(gpu.download(&a).unwrap(), vec![2; n]);
    assert_eq!(gpu.download(&b).unwrap(), vec![1; n]);
    let split = Launch::new().barrier(Barrier::MultiLaunch);
    let error = kernels::swap_among_thread_work::launch_with(gpu, &split, &mut a, &mut b, 5).unwrap_err();
    assert!(matches!(&error, gsync::Error::CannotSplit { reason, .. } if reason.contains("swap at line")), "{error}");
}
