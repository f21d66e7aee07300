//! The barrier stresses that both GPU tiers run, the quick tier on a few block sizes and
//! grids, the full tier on every one: cross-block visibility over many phases, and warps
//! handed back converged on the largest co-resident grids.

use super::checks::rng;
use super::kernels::visibility_stress;
use super::radix::RadixSort;
use gsync::prelude::*;
use rand::Rng;

/// Grids the full stress covers for a block size: the research paper's 7 and 33 (one past a
/// warp), 60, one block per SM, two per SM and the most that fit.
pub fn stress_grids(gpu: &Gpu, max: u32) -> Vec<u32> {
    let sms = gpu.info().sm_count;
    let mut grids: Vec<u32> = [7, 33, 60, sms, 2 * sms, max].into_iter().filter(|&g| g <= max).collect();
    grids.sort_unstable();
    grids.dedup();
    grids
}

/// Every barrier, Auto and MultiLaunch included, keeps every block's writes of a phase
/// visible to every block in the next, for `phases` phases, on each block size and on the
/// grids `grids(gpu, max)` picks below each barrier's own largest grid `max`.
pub fn every_barrier_makes_every_blocks_writes_visible(
    gpu: &Gpu,
    phases: u32,
    block_sizes: &[u32],
    grids: fn(&Gpu, u32) -> Vec<u32>,
) {
    let mut failures = Vec::new();
    for &threads in block_sizes {
        for &barrier in Barrier::ALL {
            // Each barrier up to its own largest grid: the compiled kernels differ in
            // registers, and so in how many blocks fit.
            let fused = Launch::new().threads(threads).barrier(barrier);
            let max = visibility_stress::max_coresident_blocks(gpu, &fused).unwrap();
            for blocks in grids(gpu, max) {
                if barrier == Barrier::Lfs && blocks > threads {
                    continue; // beyond LFS's limit: refused, see gpu_barriers.rs
                }
                let launch = fused.clone().blocks(blocks);
                let half = (blocks * threads) as usize;
                let mut slots = gpu.upload(&vec![0u32; 2 * half]).unwrap();
                let mut errors = gpu.zeros::<u32>(1).unwrap();
                let report = visibility_stress::launch_with(gpu, &launch, &mut slots, &mut errors, phases).unwrap();
                let wrong = gpu.download(&errors).unwrap()[0];
                let per_phase = report.gpu_time.as_secs_f64() * 1e6 / f64::from(phases);
                eprintln!("{barrier:>13} {blocks:>5} × {threads:>4}: {wrong} errors, {per_phase:.2} µs per phase");
                if wrong != 0 {
                    failures.push(format!("{barrier} {blocks}×{threads}: {wrong} stale reads"));
                }
                let last = gpu.download(&slots).unwrap();
                let p = phases - 1;
                let base = (p % 2) as usize * half;
                let expected = |b: u32, t: u32| (p.wrapping_mul(2654435761) ^ (b << 12) ^ t).wrapping_add(1);
                let unwritten =
                    (0..half).filter(|&i| last[base + i] != expected(i as u32 / threads, i as u32 % threads)).count();
                if unwritten != 0 {
                    failures.push(format!("{barrier} {blocks}×{threads}: {unwritten} slots not written last phase"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The largest co-resident grid of each block size under every barrier, on radix sorts whose
/// code right after `grid_sync()` uses `sync_block()` and full-warp shuffles. A barrier that
/// hands a warp back diverged makes the warp reach the next CTA barrier in pieces: on an H100
/// that faulted with an illegal instruction (ULFS, 2112 × 128) or sorted wrongly (ULFS,
/// 2640 × 32).
pub fn every_barrier_hands_back_converged_warps_on_the_largest_grid(
    gpu: &Gpu,
    sorts: &[RadixSort],
    block_sizes: &[u32],
) {
    let mut rng = rng();
    let input: Vec<u32> = (0..1 << 20).map(|_| rng.gen()).collect();
    let mut expected = input.clone();
    expected.sort_unstable();
    let mut failures = Vec::new();
    'sorts: for &sort in sorts {
        for &threads in block_sizes {
            if threads > sort.max_threads() {
                continue;
            }
            for &barrier in Barrier::ALL {
                let launch = Launch::new().threads(threads).barrier(barrier);
                let mut blocks = sort.max_coresident_blocks(gpu, &launch).unwrap();
                if barrier == Barrier::Lfs {
                    blocks = blocks.min(threads); // LFS's own limit
                }
                let case = format!("{sort:?} {barrier} {blocks} × {threads}");
                match sort.sort(gpu, &launch.blocks(blocks), &input) {
                    Ok(keys) if keys == expected => eprintln!("{case}: sorted"),
                    Ok(keys) => {
                        let wrong = keys.iter().zip(&expected).filter(|(a, b)| a != b).count();
                        failures.push(format!("{case}: {wrong} keys out of place"));
                    }
                    Err(error) => {
                        failures.push(format!("{case}: {error}"));
                        if gpu.zeros::<u32>(1).and_then(|b| gpu.download(&b)).is_err() {
                            failures.push("the GPU context is lost: the remaining cases did not run".into());
                            break 'sorts;
                        }
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
