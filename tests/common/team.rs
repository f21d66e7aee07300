//! Kernels of a team of GPUs, and the checks that a GPU in no team (a team of one) passes on
//! the emulator and on a GPU alike; `tests/team.rs` runs them on emulated teams.

use gsync::prelude::*;

pub mod kernels {
    use gsync::prelude::*;

    /// Each round, every element moves to the next PE: written into the next PE's `inbox`,
    /// then, after the spanning barrier, taken into `acc`. After `n_pes()` rounds every value
    /// is back where it began; after fewer, on the PE that many places on.
    #[grid_phases]
    pub fn ring_sum(#[symmetric] acc: &mut [u32], #[symmetric] inbox: &mut [u32], rounds: u32) {
        let next = (pe() + 1) % n_pes();
        for _ in 0..rounds {
            let mut i = global_id() as usize;
            while i < acc.len() {
                inbox.put(next, i, acc[i]);
                i += grid_size() as usize;
            }
            grid_sync();
            let mut i = global_id() as usize;
            while i < acc.len() {
                acc[i] = inbox[i];
                i += grid_size() as usize;
            }
            grid_sync();
        }
    }

    /// Every thread reads element `i` of every PE's part and adds them up.
    #[grid_phases]
    pub fn gather_sum(#[symmetric] values: &[u64], sums: &mut [u64]) {
        let mut i = global_id() as usize;
        while i < sums.len() {
            let mut total = 0u64;
            for p in 0..n_pes() {
                total += values.get(p, i);
            }
            sums[i] = total;
            i += grid_size() as usize;
        }
    }

    /// Phase after phase, every block writes its PE's phase stamp into every PE's slot for it;
    /// after each spanning barrier, every PE checks that it sees every PE's stamp of that phase.
    #[grid_phases]
    pub fn visibility(#[symmetric] stamps: &mut [u32], misses: &mut [u32], phases: u32) {
        for phase in 1..=phases {
            if thread_idx() == 0 {
                let slot = (pe() * grid_dim() + block_idx()) as usize;
                for p in 0..n_pes() {
                    stamps.put(p, slot, phase);
                }
            }
            grid_sync();
            let mut i = global_id() as usize;
            while i < stamps.len() {
                if stamps[i] != phase {
                    misses.atomic_add(0, 1);
                }
                i += grid_size() as usize;
            }
            grid_sync();
        }
    }

    /// PE `p` runs `rounds + p` rounds on its own parts, each reading what other blocks of its
    /// GPU wrote in the one before (element `i` becomes element `i + 1`, plus 1), with a
    /// `gpu_sync()` between rounds: the PEs make different numbers of them. Then every PE
    /// hands its result to the next PE's `inbox` across a spanning `grid_sync()`.
    #[grid_phases]
    pub fn local_rounds(
        #[symmetric] a: &mut [u32],
        #[symmetric] b: &mut [u32],
        #[symmetric] inbox: &mut [u32],
        rounds: u32,
    ) {
        let len = a.len();
        let own = rounds + pe();
        for round in 0..own {
            for i in grid_stride(0..len) {
                if round % 2 == 0 {
                    b[i] = a[(i + 1) % len] + 1;
                } else {
                    a[i] = b[(i + 1) % len] + 1;
                }
            }
            gpu_sync();
        }
        for i in grid_stride(0..len) {
            let v = if own % 2 == 1 { b[i] } else { a[i] };
            inbox.put((pe() + 1) % n_pes(), i, v);
        }
        grid_sync();
    }

    /// PE 0 alone adds 1 to its part (a segment the other PEs do not launch) before the first
    /// spanning barrier; then every PE adds 10, and after the second each hands its part to
    /// the next PE's `inbox`: split, the PEs launch different segments between crossings.
    #[grid_phases]
    pub fn uneven_segments(#[symmetric] a: &mut [u32], #[symmetric] inbox: &mut [u32]) {
        if pe() == 0 {
            for i in grid_stride(0..a.len()) {
                a[i] += 1;
            }
            gpu_sync();
        }
        grid_sync();
        for i in grid_stride(0..a.len()) {
            a[i] += 10;
        }
        grid_sync();
        for i in grid_stride(0..a.len()) {
            inbox.put((pe() + 1) % n_pes(), i, a[i]);
        }
    }

    /// PE 1 works a while; every PE then puts 7 into the next PE's `inbox`, and after the
    /// spanning barrier every thread reads its own `inbox[0]` (split: a read by the host).
    #[grid_phases]
    pub fn read_after_put(#[symmetric] inbox: &mut [u32], work: &mut [u32], out: &mut [u32]) {
        if pe() == 1 {
            for r in 0..300u32 {
                for i in grid_stride(0..work.len()) {
                    work[i] = work[i] * 3 + r;
                }
            }
        }
        if global_id() == 0 {
            inbox.put((pe() + 1) % n_pes(), 0, 7);
        }
        grid_sync();
        let v = inbox[0];
        for i in grid_stride(0..out.len()) {
            out[i] = v;
        }
    }

    #[grid_phases]
    pub fn reach_out(#[symmetric] a: &mut [u32], target: u32) {
        if global_id() == 0 {
            a.put(target, 0, 7);
        }
    }
}

/// Elements per PE of the checks.
pub const N: usize = 1000;

/// On a GPU in no team, `ring_sum` is a team of one: the values come back where they began,
/// `put` to PE 0 writing this GPU's own part.
pub fn a_gpu_alone_is_a_team_of_one(gpu: &Gpu) {
    assert_eq!((gpu.pe(), gpu.n_pes()), (0, 1));
    let start: Vec<u32> = (0..N as u32).map(|i| i.wrapping_mul(2_654_435_761)).collect();
    let mut acc = gpu.upload(&start).expect("upload");
    let mut inbox = gpu.zeros::<u32>(N).expect("zeros");
    kernels::ring_sum::launch(gpu, &mut acc, &mut inbox, 3).expect("a team of one");
    assert_eq!(gpu.download(&acc).expect("download"), start);
    let split = Launch::new().barrier(Barrier::MultiLaunch);
    kernels::ring_sum::launch_with(gpu, &split, &mut acc, &mut inbox, 2).expect("split, a team of one");
    assert_eq!(gpu.download(&acc).expect("download"), start);
    let values: Vec<u64> = (0..N as u64).map(|i| i * 3).collect();
    let values = gpu.upload(&values).expect("upload");
    let mut sums = gpu.zeros::<u64>(N).expect("zeros");
    kernels::gather_sum::launch(gpu, &values, &mut sums).expect("gather");
    assert_eq!(gpu.download(&sums).expect("download"), (0..N as u64).map(|i| i * 3).collect::<Vec<_>>());
}

/// `local_rounds` under `barrier` on this PE of `gpu`'s team (a team of one alone), against
/// the CPU: PE `q` receives PE `q − 1`'s part after its `rounds + q − 1` rounds.
pub fn local_rounds_match_the_cpu(gpu: &Gpu, barrier: Barrier, launch: &Launch) -> gsync::Result<()> {
    const LEN: usize = 777;
    let (pe, n_pes, rounds) = (gpu.pe(), gpu.n_pes(), 3u32);
    let part = |p: u32| -> Vec<u32> { (0..LEN as u32).map(|i| i.wrapping_mul(2_654_435_761) ^ p).collect() };
    let mut a = gpu.symmetric_upload(&part(pe))?;
    let mut b = gpu.symmetric_zeros::<u32>(LEN)?;
    let mut inbox = gpu.symmetric_zeros::<u32>(LEN)?;
    kernels::local_rounds::launch_with(gpu, &launch.clone().barrier(barrier), &mut a, &mut b, &mut inbox, rounds)?;
    let from = (pe + n_pes - 1) % n_pes;
    let own = (rounds + from) as usize;
    let start = part(from);
    let expected: Vec<u32> = (0..LEN).map(|i| start[(i + own) % LEN].wrapping_add(own as u32)).collect();
    assert_eq!(gpu.download(&inbox)?, expected, "PE {pe} of {n_pes}, {barrier}: PE {from}'s {own} rounds");
    Ok(())
}

/// A PE out of the team, even of a team of one, is a typed error and the access is skipped.
pub fn a_pe_out_of_the_team_is_refused_in_the_kernel(gpu: &Gpu) {
    let mut a = gpu.zeros::<u32>(4).expect("zeros");
    let error = kernels::reach_out::launch(gpu, &mut a, 1).expect_err("PE 1 of 1");
    assert!(matches!(&error, Error::NoSuchPe { pe: 1, n_pes: 1, .. }), "{error}");
    assert_eq!(gpu.download(&a).expect("download"), [0; 4], "the access was skipped");
}

/// Kernels that hand data between PEs with a signal instead of a grid barrier.
pub mod signals {
    use gsync::prelude::*;

    /// Block 0 of each PE puts `n` values into the next PE's `inbox`, then signals round
    /// `round` in the next PE's `flags`; it waits for its own signal, then copies its inbox
    /// out. No grid barrier: the signal alone orders the data.
    #[grid_phases]
    pub fn pass_on(#[symmetric] inbox: &mut [u32], #[symmetric] flags: &mut [u64], out: &mut [u32], round: u64) {
        if block_idx() == 0 {
            let next = (pe() + 1) % n_pes();
            for i in block_stride(0..inbox.len()) {
                inbox.put(next, i, (i as u32) * 10 + pe());
            }
            sync_block(); // the block's puts, then the signal that covers them
            if thread_idx() == 0 {
                flags.signal(next, 0, round);
                wait_until(|| flags.load_signal(0) >= round);
            }
            sync_block();
            for i in block_stride(0..inbox.len()) {
                out[i] = inbox[i];
            }
        }
    }
}
