//! The heat-equation kernels against their CPU reference, bit for bit,
//! shared by the GPU tests and the emulator tests.

use super::checks::{random_vec, rng, Scale};
use gsync::kernels::heat::{
    heat_reference_parallel, resident_grid, resident_grid_as, run_columns_at_depth, run_global, run_resident,
    run_resident_as, HeatError, ResidentForm, COLUMN_DEPTH, COLUMN_ROWS, MAX_N, TILE_CELLS,
};
use gsync::prelude::*;

const R: f32 = 0.2;

/// Fields and step counts: odd and even, sides that no block or warp size divides.
fn cases(scale: Scale) -> Vec<(usize, u32)> {
    match scale {
        Scale::Full => vec![(1024, 300), (1019, 41), (2048, 301), (1531, 257)],
        Scale::Small => vec![(1, 3), (2, 2), (3, 1), (8, 6), (37, 6), (37, 7), (40, 9), (43, 10), (64, 5), (100, 0)],
    }
}

fn reference(input: &[f32], n: usize, steps: u32) -> Vec<f32> {
    let workers = std::thread::available_parallelism().map_or(1, |w| w.get());
    heat_reference_parallel(input, n, steps, R, workers).unwrap()
}

/// Panics naming the first cell where `got` and `want` differ in bits.
fn assert_same_bits(got: &[f32], want: &[f32], n: usize, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    if let Some(i) = (0..got.len()).find(|&i| got[i].to_bits() != want[i].to_bits()) {
        panic!("{what}: cell ({}, {}) is {}, the CPU has {}", i / n, i % n, got[i], want[i]);
    }
}

pub fn heat_global_matches_the_reference_bit_for_bit(gpu: &Gpu, scale: Scale) {
    let mut rng = rng();
    for (n, steps) in cases(scale) {
        let input: Vec<f32> = random_vec(&mut rng, n * n);
        let want = reference(&input, n, steps);
        let split = Launch::new().barrier(Barrier::MultiLaunch);
        let cover = (n * n).div_ceil(256).max(1) as u32;
        let launches = [
            Launch::new(),
            Launch::new().blocks(7).threads(64).barrier(Barrier::Cooperative),
            Launch::new().blocks(3).threads(32).barrier(Barrier::Relay),
            split.clone().blocks(13).threads(32),
            split.clone().blocks(cover).threads(256),
            split.blocks(cover).threads(256).graph(true),
        ];
        for launch in &launches {
            let heated = run_global(gpu, launch, &input, n, steps, R).unwrap();
            let what = format!(
                "heat_global {n}² × {steps} on {} × {} ({})",
                heated.report.blocks, heated.report.threads, heated.report.barrier
            );
            assert_same_bits(&heated.field, &want, n, &what);
        }
    }
}

pub fn heat_resident_matches_the_reference_bit_for_bit(gpu: &Gpu, scale: Scale) {
    let mut rng = rng();
    for (n, steps) in cases(scale) {
        let input: Vec<f32> = random_vec(&mut rng, n * n);
        let want = reference(&input, n, steps);
        let mut launches: Vec<Launch> = [Barrier::Auto, Barrier::Cooperative, Barrier::Lbs, Barrier::Relay]
            .into_iter()
            .map(|b| Launch::new().barrier(b))
            .collect();
        // One row per block, two, a few, eight (the columns kernel's common shape, whatever
        // `n % 8`), and more blocks than rows (the last ones idle).
        for blocks in [n, n.div_ceil(2), 5, 7, n.div_ceil(8), n + 3] {
            let launch = Launch::new().blocks(blocks as u32);
            if resident_grid(gpu, &launch, n).is_ok() {
                launches.push(launch);
            }
        }
        for threads in [1024, 64] {
            let sized = Launch::new().threads(threads);
            if resident_grid(gpu, &sized, n).is_ok() {
                launches.push(sized);
            }
        }
        let mut ran = [0; 2];
        for launch in &launches {
            let heated = run_resident(gpu, launch, &input, n, steps, R).unwrap();
            let what = format!(
                "resident {n}² × {steps} on {} × {} ({})",
                heated.report.blocks, heated.report.threads, heated.report.barrier
            );
            assert_same_bits(&heated.field, &want, n, &what);
            // Each kernel the launch admits, whichever the default picks.
            for (form, count) in [ResidentForm::Columns, ResidentForm::Strips].into_iter().zip(&mut ran) {
                if resident_grid_as(gpu, launch, n, form).is_ok() {
                    let heated = run_resident_as(gpu, launch, form, &input, n, steps, R).unwrap();
                    assert_same_bits(&heated.field, &want, n, &format!("{form:?}: {what}"));
                    *count += 1;
                }
            }
        }
        if n > 2 && n <= 1024 {
            assert!(ran.iter().all(|&count| count > 0), "{n}²: both kernels ran: {ran:?}");
        }
    }
}

/// The field after `steps` steps when strips of `rows` rows never see their
/// neighbours' new rows: what `heat_resident` would compute without its
/// halo exchange (or with the halos read before the neighbours wrote them).
fn isolated_strips(input: &[f32], n: usize, rows: usize, steps: u32) -> Vec<f32> {
    let mut field = input.to_vec();
    for first in (0..n).step_by(rows) {
        let last = (first + rows).min(n);
        // The strip with the input's rows around it, which stay fixed.
        let (top, bottom) = (first.saturating_sub(1), (last + 1).min(n));
        let mut strip = input[top * n..bottom * n].to_vec();
        let height = bottom - top;
        for _ in 0..steps {
            let old = strip.clone();
            for i in 1..height - 1 {
                for j in 1..n - 1 {
                    let c = i * n + j;
                    let u = old[c];
                    strip[c] = u + R * (old[c - n] + old[c + n] + old[c - 1] + old[c + 1] - 4.0 * u);
                }
            }
        }
        let own = first - top;
        field[first * n..last * n].copy_from_slice(&strip[own * n..(own + last - first) * n]);
    }
    field
}

pub fn heat_resident_exchanges_halos_between_blocks(gpu: &Gpu, scale: Scale) {
    let mut rng = rng();
    let (n, steps, blocks) = match scale {
        Scale::Full => (1024, 63, 128u32),
        Scale::Small => (45, 9, 6u32),
    };
    let input: Vec<f32> = random_vec(&mut rng, n * n);
    let want = reference(&input, n, steps);
    let launch = Launch::new().blocks(blocks);
    let grid = resident_grid(gpu, &launch, n).unwrap();
    let rows = grid.rows as usize;
    // Without the exchange, every strip edge would be wrong: the check below can fail.
    let isolated = isolated_strips(&input, n, rows, steps);
    for edge in (rows..n).step_by(rows) {
        for row in [edge - 1, edge] {
            let differ = (1..n - 1).filter(|&j| isolated[row * n + j] != want[row * n + j]).count();
            assert!(differ > 0, "row {row} next to a strip edge does not depend on the neighbouring strip");
        }
    }
    for form in [ResidentForm::Columns, ResidentForm::Strips] {
        assert_eq!(resident_grid_as(gpu, &launch, n, form).unwrap().rows as usize, rows);
        for barrier in [Barrier::Auto, Barrier::Lbs, Barrier::Relay, Barrier::Cooperative] {
            let heated = run_resident_as(gpu, &launch.clone().barrier(barrier), form, &input, n, steps, R).unwrap();
            assert_eq!(heated.report.blocks, blocks);
            assert_same_bits(&heated.field, &want, n, &format!("{form:?} on {blocks} blocks ({barrier})"));
        }
    }
    // Every exchange period, with steps that no period divides (the last one is shorter).
    let most = resident_grid_as(gpu, &launch, n, ResidentForm::Columns).unwrap().depth;
    assert_eq!(most as usize, COLUMN_DEPTH.min(rows));
    for depth in 1..=most {
        let heated = run_columns_at_depth(gpu, &launch, depth, &input, n, steps, R).unwrap();
        assert_same_bits(&heated.field, &want, n, &format!("columns every {depth} steps on {blocks} blocks"));
    }
    for depth in [0, most + 1] {
        let result = run_columns_at_depth(gpu, &launch, depth, &input, n, steps, R);
        assert!(matches!(result, Err(HeatError::Depth { depth: d, most: m }) if d == depth && m == most), "{result:?}");
    }
}

pub fn heat_resident_refuses_fields_it_cannot_hold(gpu: &Gpu, _scale: Scale) {
    // Two rows (one and the spare) must fit a tile.
    let wide = TILE_CELLS / 2 + 1;
    let result = resident_grid(gpu, &Launch::new(), wide);
    assert!(matches!(result, Err(HeatError::RowTooWide { n }) if n == wide), "{result:?}");
    // 200 rows of 200 cells on 2 blocks: 20,200 cells a block with the spare row, more than a tile.
    let result = resident_grid(gpu, &Launch::new().blocks(2), 200);
    assert!(matches!(result, Err(HeatError::TooFewBlocks { n: 200, blocks: 2, rows: 100 })), "{result:?}");
    // One row per block: 5120 blocks, more than any GPU (or the emulator, at 1024 threads) holds at once.
    let n = TILE_CELLS / 2;
    let result = resident_grid(gpu, &Launch::new().threads(1024), n);
    match result {
        Err(HeatError::NotCoresident { n: side, blocks, threads, max }) => {
            assert_eq!((side, blocks, threads), (n, n as u32, 1024));
            assert!(max < blocks, "{max}");
        }
        other => panic!("expected NotCoresident, got {other:?}"),
    }
    let result = run_resident(gpu, &Launch::new(), &[0.0; 10], 3, 1, R);
    assert!(matches!(result, Err(HeatError::Shape { n: 3, len: 10 })), "{result:?}");
    let result = run_global(gpu, &Launch::new(), &[0.0; 10], 3, 1, R);
    assert!(matches!(result, Err(HeatError::Shape { n: 3, len: 10 })), "{result:?}");
    let result = run_global(gpu, &Launch::new(), &[], MAX_N + 1, 1, R);
    assert!(matches!(result, Err(HeatError::Shape { n, len: 0 }) if n == MAX_N + 1), "{result:?}");
    // The columns kernel needs a thread per column and at most COLUMN_ROWS rows per block.
    for (launch, n) in [
        (Launch::new().threads(64), 65),
        (Launch::new().threads(48), 40),
        (Launch::new().blocks(2), 2 * COLUMN_ROWS + 1),
        (Launch::new(), 1025),
    ] {
        let result = resident_grid_as(gpu, &launch, n, ResidentForm::Columns);
        assert!(matches!(result, Err(HeatError::NoColumns { n: side }) if side == n), "{n}: {result:?}");
        let result = run_resident_as(gpu, &launch, ResidentForm::Columns, &vec![0.5; n * n], n, 1, R);
        assert!(matches!(result, Err(HeatError::NoColumns { .. })), "{n}: {result:?}");
    }
    // Shared memory does not survive a kernel boundary.
    for form in [ResidentForm::Columns, ResidentForm::Strips] {
        let result = run_resident_as(gpu, &Launch::new().barrier(Barrier::MultiLaunch), form, &[0.5; 16], 4, 1, R);
        assert!(matches!(result, Err(HeatError::Gpu(Error::CannotSplit { .. }))), "{form:?}: {result:?}");
    }
    let result = run_resident(gpu, &Launch::new().barrier(Barrier::MultiLaunch), &[0.5; 16], 4, 1, R);
    assert!(matches!(result, Err(HeatError::Gpu(Error::CannotSplit { .. }))), "{result:?}");
    // Fitting fields run, the empty one without a launch.
    assert!(run_resident(gpu, &Launch::new(), &[], 0, 5, R).unwrap().field.is_empty());
    let heated = run_resident(gpu, &Launch::new().blocks(1).threads(128), &vec![1.0; 4096], 64, 2, R).unwrap();
    assert!(heated.field.iter().all(|&x| x == 1.0), "a constant field stays constant");
}
