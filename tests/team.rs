//! Teams of emulated GPUs: `grid_sync()` spanning every PE, `pe()` and `n_pes()`, symmetric
//! slices reached with `put` and `get`, and the typed errors of a team that does not agree.

use std::time::Duration;

use common::team::kernels::*;
use common::team::{self, N};
use gsync::prelude::*;
use gsync::Team;

#[test]
fn put_and_grid_sync_carry_values_around_the_ring_for_one_to_four_pes() {
    // Fused, and split: a launch per segment on every PE, the PEs meeting between segments.
    for barrier in [Barrier::Auto, Barrier::MultiLaunch] {
        for n_pes in 1..=4u32 {
            let team = Team::emulated(n_pes).expect("a team");
            let results = team
                .run(|gpu| {
                    let start: Vec<u32> = (0..N as u32).map(|i| i * 10 + gpu.pe()).collect();
                    let mut acc = gpu.symmetric_upload(&start)?;
                    let mut inbox = gpu.symmetric_zeros::<u32>(N)?;
                    // One round fewer than the team: every value ends one PE short of home.
                    let launch = Launch::new().blocks(3).threads(64).barrier(barrier);
                    ring_sum::launch_with(gpu, &launch, &mut acc, &mut inbox, n_pes - 1)?;
                    gpu.download(&acc)
                })
                .expect("the team runs");
            for (pe, acc) in results.iter().enumerate() {
                let from = (pe as u32 + 1) % n_pes;
                let expected: Vec<u32> = (0..N as u32).map(|i| i * 10 + from).collect();
                assert_eq!(acc, &expected, "PE {pe} of {n_pes}, {barrier}");
            }
        }
    }
}

#[test]
fn get_reads_every_pe_s_part() {
    let team = Team::emulated(3).expect("a team");
    let sums = team
        .run(|gpu| {
            let mine: Vec<u64> = (0..N as u64).map(|i| i * u64::from(gpu.pe() + 1)).collect();
            let values = gpu.symmetric_upload(&mine)?;
            // Every PE's part must hold its values before any PE reads: a launch that writes
            // nothing but meets the team at its end would do; allocation already is one.
            let mut sums = gpu.zeros::<u64>(N)?;
            gather_sum::launch_with(gpu, &Launch::new().blocks(2).threads(128), &values, &mut sums)?;
            gpu.download(&sums)
        })
        .expect("the team runs");
    let expected: Vec<u64> = (0..N as u64).map(|i| i * 6).collect();
    for pe_sums in sums {
        assert_eq!(pe_sums, expected);
    }
}

#[test]
fn every_phase_sees_every_pe_s_writes_of_the_phase_before() {
    for barrier in [Barrier::Auto, Barrier::MultiLaunch] {
        let team = Team::emulated(4).expect("a team");
        let blocks = 3u32;
        let misses = team
            .run(|gpu| {
                let mut stamps = gpu.symmetric_zeros::<u32>((gpu.n_pes() * blocks) as usize)?;
                let mut misses = gpu.zeros::<u32>(1)?;
                let launch = Launch::new().blocks(blocks).threads(32).barrier(barrier);
                visibility::launch_with(gpu, &launch, &mut stamps, &mut misses, 200)?;
                Ok(gpu.download(&misses)?[0])
            })
            .expect("the team runs");
        assert_eq!(misses, [0, 0, 0, 0], "{barrier}");
    }
}

#[test]
fn a_gpu_in_no_team_is_pe_0_of_1() {
    team::a_gpu_alone_is_a_team_of_one(&Gpu::emulator());
}

#[test]
fn a_pe_out_of_a_team_of_one_is_refused_in_the_kernel() {
    team::a_pe_out_of_the_team_is_refused_in_the_kernel(&Gpu::emulator());
}

#[test]
fn a_pe_out_of_the_team_is_a_typed_error() {
    let team = Team::emulated(2).expect("a team");
    let error = team
        .run(|gpu| {
            let mut a = gpu.symmetric_zeros::<u32>(4)?;
            reach_out::launch(gpu, &mut a, 2)
        })
        .expect_err("PE 2 of 2");
    assert!(matches!(&error, Error::NoSuchPe { pe: 2, n_pes: 2, .. }), "{error}");
    assert!(error.to_string().contains("`a` on line"), "{error}");
}

#[test]
fn a_plain_buffer_for_a_symmetric_parameter_on_a_team_is_refused() {
    for barrier in [Barrier::Auto, Barrier::MultiLaunch] {
        let team = Team::emulated(2).expect("a team");
        let error = team
            .run(|gpu| {
                let mut a = gpu.zeros::<u32>(4)?;
                reach_out::launch_with(gpu, &Launch::new().barrier(barrier), &mut a, 0)
            })
            .expect_err("not symmetric");
        assert!(matches!(&error, Error::NotSymmetric { param, .. } if param == "a"), "{barrier}: {error}");
    }
}

#[test]
fn symmetric_allocations_that_disagree_fail_every_pe() {
    let team = Team::emulated(3).expect("a team");
    let error = team
        .run(|gpu| {
            let len = if gpu.pe() == 1 { 8 } else { 4 };
            gpu.symmetric_zeros::<f32>(len).map(drop)
        })
        .expect_err("lengths differ");
    assert!(matches!(error, Error::TeamMismatch { .. }), "{error}");
    assert!(error.to_string().contains("of 8 f32"), "{error}");
}

#[test]
fn pes_that_launch_different_kernels_fail_alike() {
    let team = Team::emulated(2).expect("a team");
    let error = team
        .run(|gpu| {
            let mut a = gpu.symmetric_zeros::<u32>(4)?;
            let mut inbox = gpu.symmetric_zeros::<u32>(4)?;
            if gpu.pe() == 0 {
                reach_out::launch(gpu, &mut a, 0).map(drop)
            } else {
                ring_sum::launch(gpu, &mut a, &mut inbox, 1).map(drop)
            }
        })
        .expect_err("different kernels");
    assert!(matches!(error, Error::TeamMismatch { .. }), "{error}");
    assert!(error.to_string().contains("launches `reach_out`"), "{error}");
}

#[test]
fn a_pe_that_never_launches_is_named_and_none_hangs() {
    let team = Team::emulated(3).expect("a team");
    let started = std::time::Instant::now();
    let error = team
        .run(|gpu| {
            let mut acc = gpu.symmetric_zeros::<u32>(16)?;
            let mut inbox = gpu.symmetric_zeros::<u32>(16)?;
            if gpu.pe() == 2 {
                // PE 2 stays away past the others' limit, then leaves.
                std::thread::sleep(Duration::from_millis(1500));
                return Ok(());
            }
            let launch = Launch::new().deadline(Some(Duration::from_millis(300)));
            ring_sum::launch_with(gpu, &launch, &mut acc, &mut inbox, 2).map(drop)
        })
        .expect_err("PE 2 never launches");
    assert!(matches!(&error, Error::PeNotArrived { pe: 2, .. }), "{error}");
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[test]
fn a_launch_refused_on_one_pe_runs_on_none_and_its_cause_comes_back() {
    let team = Team::emulated(2).expect("a team");
    let errors = team.run(|gpu| {
        let mut acc = gpu.symmetric_zeros::<u32>(16)?;
        let mut inbox = gpu.symmetric_zeros::<u32>(16)?;
        // PE 1's grid is refused: no PE runs the launch.
        let blocks = if gpu.pe() == 1 { 1 << 20 } else { 2 };
        ring_sum::launch_with(gpu, &Launch::new().blocks(blocks), &mut acc, &mut inbox, 2).map(drop)
    });
    let error = errors.expect_err("PE 1 refused");
    assert!(matches!(error, Error::TooManyBlocks { .. }), "the cause comes back, not a consequence: {error}");
}

#[test]
fn a_pe_that_panics_fails_the_waiting_pes_and_the_panic_comes_back() {
    let team = Team::emulated(3).expect("a team");
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        team.run(|gpu| {
            let mut acc = gpu.symmetric_zeros::<u32>(16)?;
            let mut inbox = gpu.symmetric_zeros::<u32>(16)?;
            if gpu.pe() == 1 {
                panic!("PE 1 gives up");
            }
            ring_sum::launch(gpu, &mut acc, &mut inbox, 2).map(drop)
        })
    }));
    let payload = outcome.expect_err("the panic resumes");
    assert_eq!(payload.downcast_ref::<&str>(), Some(&"PE 1 gives up"));
}

#[test]
fn the_others_see_a_pe_that_left_as_a_typed_error() {
    let team = Team::emulated(2).expect("a team");
    let errors = team.run(|gpu| {
        let mut acc = gpu.symmetric_zeros::<u32>(16)?;
        let mut inbox = gpu.symmetric_zeros::<u32>(16)?;
        if gpu.pe() == 1 {
            return Ok(None);
        }
        Ok(Some(ring_sum::launch(gpu, &mut acc, &mut inbox, 2).map(drop)))
    });
    let outcomes = errors.expect("both return");
    let error = outcomes[0].as_ref().expect("PE 0 launched").as_ref().expect_err("PE 1 left");
    assert!(matches!(error, Error::PeLeft { pe: 1, .. }), "{error}");
}

/// The split form: one launch per segment on every PE, the PEs meeting between segments.
fn split() -> Launch {
    Launch::new().barrier(Barrier::MultiLaunch).blocks(3).threads(64)
}

#[test]
fn the_heat_equation_split_across_a_team_matches_its_fused_run_bit_for_bit() {
    use gsync::kernels::heat_team::run_strips;
    let (n, steps, r) = (29usize, 9u32, 0.2f32);
    let field: Vec<f32> = (0..n * n).map(|i| ((i * 104_729) % 997) as f32 / 7.0).collect();
    let team = Team::emulated(3).expect("a team");
    let runs = team
        .run(|gpu| {
            let fused = run_strips(gpu, &Launch::new().blocks(3).threads(64), &field, n, steps, r)?.0;
            let (rows, report) = run_strips(gpu, &split(), &field, n, steps, r)?;
            Ok((fused, rows, report.barrier))
        })
        .expect("the team runs");
    for (pe, (fused, rows, barrier)) in runs.iter().enumerate() {
        assert_eq!(*barrier, Barrier::MultiLaunch);
        assert!(fused.iter().zip(rows).all(|(a, b)| a.to_bits() == b.to_bits()), "PE {pe}");
    }
}

#[test]
fn pes_whose_split_runs_cross_a_different_number_of_times_fail_alike() {
    let team = Team::emulated(2).expect("a team");
    let outcomes = team
        .run(|gpu| {
            let mut acc = gpu.symmetric_zeros::<u32>(N)?;
            let mut inbox = gpu.symmetric_zeros::<u32>(N)?;
            // PE 1 goes round once more: it crosses where PE 0 has finished.
            let rounds = 2 + gpu.pe();
            Ok(ring_sum::launch_with(gpu, &split(), &mut acc, &mut inbox, rounds).map(drop))
        })
        .expect("every PE returns");
    for (pe, outcome) in outcomes.iter().enumerate() {
        let error = outcome.as_ref().expect_err("the runs disagree");
        assert!(matches!(error, Error::TeamMismatch { .. }), "PE {pe}: {error}");
        assert!(error.to_string().contains("passes grid_sync() number"), "{error}");
    }
}

#[test]
fn a_split_run_refused_on_one_pe_runs_on_none() {
    let team = Team::emulated(2).expect("a team");
    let outcomes = team
        .run(|gpu| {
            let mut a = gpu.symmetric_zeros::<u32>(4)?;
            let threads = if gpu.pe() == 1 { 4096 } else { 64 };
            let launch = Launch::new().barrier(Barrier::MultiLaunch).threads(threads);
            Ok(reach_out::launch_with(gpu, &launch, &mut a, 0).map(drop))
        })
        .expect("every PE returns");
    let error = outcomes[0].as_ref().expect_err("PE 1 refused");
    assert!(matches!(error, Error::TeamRefused { pe: 1, .. }), "{error}");
    let own = outcomes[1].as_ref().expect_err("too many threads");
    assert!(!matches!(own, Error::TeamRefused { .. }), "PE 1 returns its own error: {own}");
}

#[test]
fn split_team_kernels_compile_with_their_crossing_for_nvrtc() {
    let source = ring_sum::KERNEL.spanning_source(Barrier::MultiLaunch, 128, 1);
    assert!(source.contains("gsync_team_segment_crossing("), "a split kernel for a team has its crossing");
    assert!(!ring_sum::KERNEL.source(Barrier::MultiLaunch, 128).contains("gsync_team_segment_crossing"));
    if !gsync::__private::nvrtc_or_skip() {
        return;
    }
    for arch in [(8, 0), (9, 0)] {
        if let Err(error) = gsync::compile(&source, "ring_sum", arch) {
            panic!("ring_sum split for a team, sm_{}{}: {error}", arch.0, arch.1);
        }
    }
}

#[test]
fn team_kernels_compile_with_nvrtc_for_every_architecture() {
    if !gsync::__private::nvrtc_or_skip() {
        return;
    }
    let sources = [
        ("ring_sum", ring_sum::cuda_source()),
        ("gather_sum", gather_sum::cuda_source()),
        ("visibility", visibility::cuda_source()),
        ("reach_out", reach_out::cuda_source()),
        ("pass_on", common::team::signals::pass_on::cuda_source()),
        ("cg_strips", gsync::kernels::cg_team::solver::cg_strips::cuda_source()),
        ("heat_strips", gsync::kernels::heat_team::heat_strips::cuda_source()),
        ("local_rounds", local_rounds::cuda_source()),
    ];
    for (name, source) in sources {
        assert!(source.contains("gsync_team.pe") || name == "gather_sum", "{name} reads its PE from the team record");
        for arch in [(8, 0), (9, 0)] {
            if let Err(error) = gsync::compile(&source, name, arch) {
                panic!("{name} for sm_{}{}: {error}", arch.0, arch.1);
            }
        }
    }
}

#[test]
fn spanning_kernels_compile_with_nvrtc_under_every_device_barrier() {
    if !gsync::__private::nvrtc_or_skip() {
        return;
    }
    // Which barriers each kernel's body calls: `grid_sync()` becomes the spanning barrier
    // (span.cuh's `gsync_grid_sync`), `gpu_sync()` the fragment's own (`gsync_gpu_sync`).
    let specs = [
        ("ring_sum", &ring_sum::KERNEL, true, false),
        ("visibility", &visibility::KERNEL, true, false),
        ("local_rounds", &local_rounds::KERNEL, true, true),
        ("heat_strips", &gsync::kernels::heat_team::heat_strips::KERNEL, false, true),
    ];
    for (name, spec, spans, local) in specs {
        assert_eq!(spec.body().contains("gsync_grid_sync(gsync_barrier, gsync_status);"), spans, "{name}");
        assert_eq!(spec.body().contains("gsync_gpu_sync(gsync_barrier, gsync_status);"), local, "{name}");
    }
    for &barrier in Barrier::DEVICE {
        for (name, spec, ..) in specs {
            let source = spec.spanning_source(barrier, 128, 1);
            if let Err(error) = gsync::compile(&source, name, (9, 0)) {
                panic!("{name} under {barrier}, spanning: {error}");
            }
        }
    }
}

/// PEs whose own control flow launches different segments between two `grid_sync()` calls
/// (or none at all) still cross at each of them, fused and split alike.
#[test]
fn split_pes_cross_at_every_grid_sync_whatever_segments_they_launch() {
    let team = Team::emulated(3).expect("a team");
    for barrier in [Barrier::Auto, Barrier::MultiLaunch] {
        let parts = team
            .run(|gpu| {
                let launch = Launch::new().blocks(2).threads(32).barrier(barrier);
                let mut a = gpu.symmetric_zeros::<u32>(64)?;
                let mut inbox = gpu.symmetric_zeros::<u32>(64)?;
                uneven_segments::launch_with(gpu, &launch, &mut a, &mut inbox)?;
                Ok((gpu.download(&a)?, gpu.download(&inbox)?))
            })
            .unwrap_or_else(|error| panic!("{barrier}: {error}"));
        for (pe, (a, inbox)) in parts.iter().enumerate() {
            let own = if pe == 0 { 11 } else { 10 };
            assert!(a.iter().all(|&v| v == own), "{barrier}, PE {pe}: {a:?}");
            // PE p's inbox holds the previous PE's part as it was at the second grid_sync().
            let from = (pe + 2) % 3;
            let sent = if from == 0 { 11 } else { 10 };
            assert!(inbox.iter().all(|&v| v == sent), "{barrier}, PE {pe}: {inbox:?}");
        }
    }
}

/// A host read after a `grid_sync()` in the split form sees what the other PEs put before it.
#[test]
fn a_split_host_read_after_grid_sync_sees_the_other_pes_puts() {
    let team = Team::emulated(2).expect("a team");
    for barrier in [Barrier::Auto, Barrier::MultiLaunch] {
        let outs = team
            .run(|gpu| {
                let launch = Launch::new().blocks(2).threads(32).barrier(barrier);
                let mut inbox = gpu.symmetric_zeros::<u32>(4)?;
                let mut work = gpu.zeros::<u32>(4096)?;
                let mut out = gpu.zeros::<u32>(64)?;
                read_after_put::launch_with(gpu, &launch, &mut inbox, &mut work, &mut out)?;
                gpu.download(&out)
            })
            .unwrap_or_else(|error| panic!("{barrier}: {error}"));
        for (pe, out) in outs.iter().enumerate() {
            assert!(out.iter().all(|&v| v == 7), "{barrier}, PE {pe}: {out:?}");
        }
    }
}

#[test]
fn a_field_that_leaves_a_pe_without_rows_is_refused_on_every_pe() {
    use gsync::kernels::heat_team::run_strips;
    let team = Team::emulated(4).expect("a team");
    let n = 5; // three interior rows for four PEs
    let field = vec![1.0f32; n * n];
    let outcomes = team
        .run(|gpu| Ok(run_strips(gpu, &Launch::new().blocks(1).threads(32), &field, n, 2, 0.2).map(drop)))
        .expect("every PE returns");
    for (pe, outcome) in outcomes.iter().enumerate() {
        let error = outcome.as_ref().expect_err("too small a field");
        assert!(matches!(error, Error::InvalidShape { .. }), "PE {pe}: {error}");
    }
}

#[test]
fn gpu_sync_waits_for_one_pe_s_blocks_as_often_as_each_pe_calls_it() {
    for n_pes in 1..=3 {
        let team = Team::emulated(n_pes).expect("a team");
        for barrier in [Barrier::Auto, Barrier::MultiLaunch] {
            team.run(|gpu| team::local_rounds_match_the_cpu(gpu, barrier, &Launch::new().blocks(3).threads(64)))
                .unwrap_or_else(|error| panic!("{n_pes} PEs, {barrier}: {error}"));
        }
    }
}

#[test]
fn the_heat_equation_across_a_team_matches_the_cpu_bit_for_bit() {
    heat_strips_match_the_cpu(35, 21, 1..=4, &Launch::new().blocks(3).threads(64));
}

#[test]
fn the_heat_equation_across_a_team_matches_the_cpu_with_strips_of_one_and_two_rows_and_one_block() {
    // 4 interior rows on 4 PEs: a row each, stepped and sent by the one block.
    heat_strips_match_the_cpu(6, 9, [4], &Launch::new().blocks(1).threads(32));
    // 5 interior rows: strips of 3 and 2 rows, or of 2, 2 and 1.
    heat_strips_match_the_cpu(7, 9, [2, 3], &Launch::new().blocks(1).threads(32));
    heat_strips_match_the_cpu(7, 9, [2, 3], &Launch::new().blocks(5).threads(32));
}

/// `heat_strips` on an `n × n` field for `steps` steps, on teams of each of `pes`: every PE's
/// strip bit for bit the CPU's.
fn heat_strips_match_the_cpu(n: usize, steps: u32, pes: impl IntoIterator<Item = u32>, launch: &Launch) {
    use gsync::kernels::heat::heat_reference;
    use gsync::kernels::heat_team::{run_strips, strip};
    let r = 0.2f32;
    let field: Vec<f32> = (0..n * n).map(|i| ((i * 7919) % 1000) as f32 / 10.0).collect();
    let expected = heat_reference(&field, n, steps, r).expect("reference");
    for n_pes in pes {
        let team = Team::emulated(n_pes).expect("a team");
        let strips = team
            .run(|gpu| {
                let (rows, _) = run_strips(gpu, launch, &field, n, steps, r)?;
                Ok((strip(n, gpu.pe(), gpu.n_pes())?, rows))
            })
            .expect("the team runs");
        for (strip, rows) in strips {
            let want = &expected[strip.first * n..(strip.first + strip.mine) * n];
            assert!(rows.iter().zip(want).all(|(a, b)| a.to_bits() == b.to_bits()), "{n_pes} PEs, strip {strip:?}");
        }
    }
}

#[test]
fn a_signal_hands_put_data_to_the_next_pe_without_a_grid_barrier() {
    use common::team::signals::pass_on;
    let team = Team::emulated(3).expect("a team");
    let outs = team
        .run(|gpu| {
            let mut inbox = gpu.symmetric_zeros::<u32>(300)?;
            let mut flags = gpu.symmetric_zeros::<u64>(1)?;
            let mut out = gpu.zeros::<u32>(300)?;
            let mut rounds = Vec::new();
            for round in 1..=3u64 {
                pass_on::launch_with(
                    gpu,
                    &Launch::new().blocks(2).threads(64),
                    &mut inbox,
                    &mut flags,
                    &mut out,
                    round,
                )?;
                rounds.push(gpu.download(&out)?);
            }
            Ok((gpu.pe(), rounds))
        })
        .expect("the team runs");
    for (pe, rounds) in outs {
        let from = (pe + 2) % 3;
        for out in rounds {
            assert_eq!(out, (0..300u32).map(|i| i * 10 + from).collect::<Vec<_>>(), "PE {pe}");
        }
    }
}

/// An assertion that fails on PE 1 between two barriers.
#[grid_phases]
fn asserts_off_pe_1(a: &mut [u32]) {
    grid_sync();
    assert!(pe() != 1, "PE 1 stops here");
    grid_sync();
    if global_id() == 0 {
        a[0] = 1;
    }
}

#[test]
fn an_assertion_on_one_pe_is_its_error_and_the_others_hear_of_it() {
    // Fused, the others hear of it at the barrier where PE 1 stops; split, before the segment
    // after the one that failed.
    for barrier in [Barrier::Auto, Barrier::MultiLaunch] {
        let team = Team::emulated(3).expect("a team");
        let outcomes = team
            .run(|gpu| {
                let mut a = gpu.zeros::<u32>(1)?;
                let launch = Launch::new().blocks(2).threads(32).barrier(barrier);
                Ok(asserts_off_pe_1::launch_with(gpu, &launch, &mut a).map(drop))
            })
            .expect("every PE returns");
        for (pe, outcome) in outcomes.iter().enumerate() {
            let error = outcome.as_ref().expect_err("the launch failed on every PE");
            if pe == 1 {
                assert!(matches!(error, Error::AssertionFailed { .. }), "PE 1, {barrier}: {error}");
            } else {
                assert!(matches!(error, Error::PeFailed { pe: 1, .. }), "PE {pe}, {barrier}: {error}");
                assert!(error.to_string().contains("asserts_off_pe_1"), "{error}");
            }
        }
    }
}

#[test]
fn a_symmetric_buffer_reaches_kernels_only_on_its_own_pe() {
    // A PE's part taken to a GPU in no team.
    let team = Team::emulated(2).expect("a team");
    let (tx, rx) = std::sync::mpsc::channel();
    let tx = std::sync::Mutex::new(tx);
    team.run(|gpu| {
        let part = gpu.symmetric_zeros::<u32>(4)?;
        if gpu.pe() == 1 {
            tx.lock().expect("the sender").send(part).expect("sent");
        }
        Ok(())
    })
    .expect("the team runs");
    let mut part = rx.recv().expect("PE 1's part");
    let error = reach_out::launch(&Gpu::emulator(), &mut part, 0).expect_err("not this GPU's");
    assert!(matches!(error, Error::BufferOnOtherGpu { buffer_gpu: 1, launch_gpu: 0, .. }), "{error}");
}

#[test]
fn conjugate_gradients_across_a_team_match_one_gpu_bit_for_bit_and_converge() {
    use gsync::kernels::cg_team::{cg_strip, solve_strips};
    let (m, iterations) = (24usize, 40u32);
    let b: Vec<f32> = (0..m * m).map(|i| ((i * 37) % 11) as f32 - 5.0).collect();
    let solve = |n_pes: u32, barrier: Barrier| -> Vec<f32> {
        let team = Team::emulated(n_pes).expect("a team");
        let strips = team
            .run(|gpu| {
                let launch = Launch::new().blocks(3).threads(64).barrier(barrier);
                let (x, _) = solve_strips(gpu, &launch, &b, m, iterations)?;
                Ok((cg_strip(m, gpu.pe(), gpu.n_pes()).0, x))
            })
            .expect("the team runs");
        let mut x = vec![f32::NAN; m * m];
        for (first, rows) in strips {
            x[first * m..first * m + rows.len()].copy_from_slice(&rows);
        }
        x
    };
    let alone = solve(1, Barrier::Auto);
    // The residual of A x = b, on the CPU.
    let at = |x: &[f32], i: isize, j: isize| -> f64 {
        if i < 0 || j < 0 || i >= m as isize || j >= m as isize {
            0.0
        } else {
            f64::from(x[i as usize * m + j as usize])
        }
    };
    let residual: f64 = (0..m as isize)
        .flat_map(|i| (0..m as isize).map(move |j| (i, j)))
        .map(|(i, j)| {
            let ax = 4.0 * at(&alone, i, j)
                - at(&alone, i - 1, j)
                - at(&alone, i + 1, j)
                - at(&alone, i, j - 1)
                - at(&alone, i, j + 1);
            (f64::from(b[i as usize * m + j as usize]) - ax).powi(2)
        })
        .sum::<f64>()
        .sqrt();
    let norm: f64 = b.iter().map(|&v| f64::from(v).powi(2)).sum::<f64>().sqrt();
    for (n_pes, barrier) in [(2, Barrier::Auto), (3, Barrier::Auto), (4, Barrier::Auto), (3, Barrier::MultiLaunch)] {
        let team = solve(n_pes, barrier);
        let differ = (0..m * m).filter(|&i| team[i].to_bits() != alone[i].to_bits()).count();
        assert_eq!(differ, 0, "{n_pes} PEs, {barrier}, differ from one GPU in {differ} cells");
    }
    assert!(residual / norm < 1e-3, "relative residual {}", residual / norm);
}

#[test]
fn conjugate_gradients_sum_many_row_groups_alike_on_any_team() {
    use gsync::kernels::cg_team::solve_strips;
    // 300 rows: three groups of the dot products' totals, one of them partial.
    let (m, iterations) = (300usize, 3u32);
    let b: Vec<f32> = (0..m * m).map(|i| ((i * 53) % 17) as f32 - 8.0).collect();
    let solve = |n_pes: u32| -> Vec<f32> {
        let rows = Team::emulated(n_pes)
            .expect("a team")
            .run(|gpu| {
                let launch = Launch::new().blocks(4).threads(128);
                let (x, _) = solve_strips(gpu, &launch, &b, m, iterations)?;
                Ok(x)
            })
            .expect("the team runs");
        rows.concat()
    };
    let alone = solve(1);
    assert!(alone.iter().any(|&v| v != 0.0));
    assert_eq!(
        solve(3).iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        alone.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
    );
}

// ---- Ranges: `put_range` and `put_range_signal` -------------------------------------------

mod ranges {
    use common::team_ranges::{self, kernels::*};
    use gsync::prelude::*;
    use gsync::Team;

    /// Runs `check` on every PE of emulated teams of 1 to 4 PEs.
    fn on_teams(check: impl Fn(&Gpu) -> gsync::Result<()> + Sync) {
        for n_pes in 1..=4u32 {
            Team::emulated(n_pes).expect("a team").run(&check).unwrap_or_else(|e| panic!("{n_pes} PEs: {e}"));
        }
    }

    #[test]
    fn a_ring_of_ranges_matches_the_cpu_for_every_integer_type() {
        on_teams(|gpu| {
            team_ranges::ring_ranges_match_the_cpu(gpu, Barrier::Auto, |pe| {
                (0..150).map(|i| i + 1000 * pe).collect::<Vec<u32>>()
            })?;
            team_ranges::ring_ranges_match_the_cpu(gpu, Barrier::Auto, |pe| {
                (0..150).map(|i| -(i * 3) - pe as i32).collect::<Vec<_>>()
            })?;
            team_ranges::ring_ranges_match_the_cpu(gpu, Barrier::Auto, |pe| {
                (0..150).map(|i| (i << 40) + u64::from(pe)).collect::<Vec<u64>>()
            })?;
            team_ranges::ring_ranges_match_the_cpu(gpu, Barrier::Auto, |pe| {
                (0..150).map(|i| i64::MIN + i + i64::from(pe)).collect::<Vec<_>>()
            })?;
            Ok(())
        });
    }

    #[test]
    fn a_ring_of_ranges_moves_float_bits_unchanged() {
        // NaN payloads, -0.0, subnormals and infinities arrive as they left.
        let f32s = |pe: u32| -> Vec<f32> {
            let specials = [f32::from_bits(0x7fc0_1234), -0.0, f32::from_bits(1), f32::NEG_INFINITY];
            (0..150).map(|i| if i % 5 == 0 { specials[i / 5 % 4] } else { i as f32 / 3.0 + pe as f32 }).collect()
        };
        let f64s = |pe: u32| -> Vec<f64> {
            let specials = [f64::from_bits(0xfff8_0000_0000_0042), -0.0, f64::from_bits(3), f64::INFINITY];
            (0..150).map(|i| if i % 7 == 0 { specials[i / 7 % 4] } else { i as f64 / 7.0 - f64::from(pe) }).collect()
        };
        on_teams(|gpu| {
            team_ranges::ring_ranges_match_the_cpu(gpu, Barrier::Auto, f32s)?;
            team_ranges::ring_ranges_match_the_cpu(gpu, Barrier::Auto, f64s)
        });
    }

    #[test]
    fn a_ring_of_half_precision_ranges_moves_their_bits_unchanged() {
        on_teams(team_ranges::half_ranges_keep_their_bits);
    }

    #[test]
    fn a_halo_exchange_with_signals_alone_matches_the_cpu_over_many_steps() {
        let (cells, w, steps) = (100usize, 3usize, 60u32);
        for n_pes in 1..=4u32 {
            let line: Vec<u32> =
                (0..n_pes as usize * cells + 2 * w).map(|i| ((i * 7919) % 1024) as u32 * 1000).collect();
            let expected = team_ranges::halo_steps_reference(&line, w, steps);
            let strips = Team::emulated(n_pes)
                .expect("a team")
                .run(|gpu| team_ranges::halo_steps_on(gpu, &line, cells, w, steps))
                .expect("the team runs");
            assert_eq!(strips.concat(), expected[w..w + n_pes as usize * cells], "{n_pes} PEs");
        }
    }

    #[test]
    fn every_thread_of_the_block_sees_the_whole_copy_after_put_range() {
        on_teams(team_ranges::the_block_sees_its_copy_after_put_range);
    }

    #[test]
    fn a_range_of_a_shared_array_reaches_the_next_pe() {
        on_teams(|gpu| team_ranges::shared_tiles_reach_the_next_pe(gpu, Barrier::Auto));
    }

    #[test]
    fn ranges_out_of_bounds_and_pes_out_of_the_team_are_typed_faults() {
        on_teams(team_ranges::range_faults_are_out_of_bounds_and_copy_nothing);
    }

    #[test]
    fn range_kernels_compile_with_nvrtc_checked_unchecked_spanning_and_split() {
        if !gsync::__private::nvrtc_or_skip() {
            return;
        }
        let kernels = [
            ("ring_ranges", &ring_ranges::__u32::KERNEL),
            ("ring_ranges", &ring_ranges::__i64::KERNEL),
            ("ring_ranges", &ring_ranges::__f32::KERNEL),
            ("ring_ranges", &ring_ranges::__f64::KERNEL),
            ("ring_halves", &ring_halves::KERNEL),
            ("halo_steps", &halo_steps::KERNEL),
            ("put_range_as_given", &put_range_as_given::KERNEL),
            ("tiles_to_the_next", &tiles_to_the_next::KERNEL),
            ("reads_after_the_copy", &reads_after_the_copy::KERNEL),
        ];
        for (name, spec) in kernels {
            for checks in [true, false] {
                let mut spec = *spec;
                spec.bounds_checks = checks;
                let sources = [
                    ((8, 0), spec.source(Barrier::default(), 128)),
                    ((9, 0), spec.source(Barrier::default(), 128)),
                    ((9, 0), spec.spanning_source(Barrier::Relay, 128, 1)),
                    ((9, 0), spec.spanning_source(Barrier::MultiLaunch, 128, 1)),
                ];
                for (arch, source) in sources {
                    assert_eq!(
                        source.contains("gsync::span_in_bounds"),
                        checks,
                        "{name}: the range checks follow the build"
                    );
                    assert!(source.contains("gsync::store_relaxed_sys(gsync::on_pe("), "{name}");
                    if let Err(error) = gsync::compile(&source, name, arch) {
                        panic!("{name} for sm_{}{} (bounds checks {checks}): {error}", arch.0, arch.1);
                    }
                }
            }
        }
    }
}

#[test]
fn the_heat_equation_across_a_team_with_wide_rows_matches_the_cpu_bit_for_bit() {
    // Rows of 1030 cells: a block steps and hands on a row in pieces of up to 1024.
    heat_strips_match_the_cpu(1030, 3, [2, 3], &Launch::new().blocks(4).threads(256));
}

#[test]
fn range_puts_run_inside_the_segments_of_the_split_form() {
    let split = Launch::new().barrier(Barrier::MultiLaunch);
    heat_strips_match_the_cpu(35, 21, 1..=4, &split.clone().blocks(3).threads(64));
    heat_strips_match_the_cpu(1030, 3, [3], &split.clone().blocks(4).threads(256));
    for n_pes in 1..=4u32 {
        Team::emulated(n_pes)
            .expect("a team")
            .run(|gpu| {
                let ramp = |pe: u32| (0..150).map(|i| i + 1000 * pe).collect::<Vec<u32>>();
                common::team_ranges::ring_ranges_match_the_cpu(gpu, Barrier::MultiLaunch, ramp)?;
                common::team_ranges::shared_tiles_reach_the_next_pe(gpu, Barrier::MultiLaunch)
            })
            .unwrap_or_else(|e| panic!("{n_pes} PEs: {e}"));
    }
}

#[test]
fn a_pe_of_a_team_has_one_stream() {
    let errors = Team::emulated(2).unwrap().run(|gpu| Ok(gpu.new_stream().map(drop))).unwrap();
    for error in errors {
        assert!(matches!(error, Err(Error::TeamStream)), "{error:?}");
    }
}
