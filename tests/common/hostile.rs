//! Kernels at the edges of the language, where a lowering or a stop could go wrong: device
//! functions called in conditional positions, an assertion before a `grid_sync()` inside a
//! device function, a spin condition through a device function, a module's lookup table, and
//! kernels that never end. The checks run on any `Gpu` (the emulator in CI, a GPU in
//! `gpu_hostile_inputs.rs`); `hostile_inputs.rs` also compiles every kernel through NVRTC.

use gsync::prelude::*;
use std::time::Duration;

#[gsync::kernels]
pub mod edges {

    /// The module's lookup table.
    const POWERS: [u32; 4] = [1, 2, 4, 8];

    #[device]
    fn bump(counter: &mut [u32]) {
        counter.atomic_add(0, 1);
    }

    #[device]
    fn get(a: &[u32], i: usize) -> u32 {
        a[i]
    }

    #[device]
    fn step_barrier() {
        grid_sync();
    }

    #[device]
    fn ready(flags: &[u32]) -> bool {
        flags.load_acquire(0) != 0
    }

    /// Only thread 0 of each block takes the arm that bumps: `counter[0]` ends as the block count.
    #[grid_phases(threads = 32)]
    pub fn bump_in_an_arm(counter: &mut [u32]) {
        match thread_idx() {
            0 => bump(counter),
            _ => {}
        }
    }

    /// `out[i]` is `table[keys[i]]`, or 0 where the key is `u32::MAX`: `get` runs only in its arm.
    #[grid_phases(threads = 64)]
    pub fn get_in_a_value_match(table: &[u32], keys: &[u32], out: &mut [u32]) {
        for i in grid_stride(0..keys.len()) {
            let k = keys[i];
            out[i] = match k {
                0xFFFF_FFFF => 0,
                _ => get(table, k as usize),
            };
        }
    }

    /// `out[i]` is 0 where `keys[i]` is past `table`'s end, else 1 or 2 by `table[keys[i]] > 5`:
    /// `get` runs only where the first condition failed.
    #[grid_phases(threads = 64)]
    pub fn get_in_an_else_if(table: &[u32], keys: &[u32], out: &mut [u32]) {
        for i in grid_stride(0..keys.len()) {
            let k = keys[i] as usize;
            if k >= table.len() {
                out[i] = 0;
            } else if get(table, k) > 5 {
                out[i] = 1;
            } else {
                out[i] = 2;
            }
        }
    }

    /// Thread 0 of every block fails its assertion where `a[0]` is not 0, then runs on to the
    /// `grid_sync()` inside `step_barrier`: the grid stops there together.
    #[grid_phases(threads = 32)]
    pub fn assert_then_barrier(a: &mut [u32]) {
        assert!(thread_idx() != 0 || a[0] == 0, "thread 0 saw a[0] set");
        step_barrier();
        if global_id() == 0 {
            a[1] = 1;
        }
    }

    /// Every thread waits, through `ready`, for the flag that thread 0 raises after writing
    /// `out[0]`, then copies `out[0]`.
    #[grid_phases(threads = 32)]
    pub fn wait_through_a_call(flags: &mut [u32], out: &mut [u32]) {
        let me = global_id() as usize;
        if me == 0 {
            out[0] = 42;
            flags.store_release(0, 1);
        }
        wait_until(|| ready(flags));
        out[me + 1] = out[0];
    }

    /// `out[i]` is `POWERS[i % 4] + POWERS[(i + 1) % 4]`, the two halves a phase apart.
    #[grid_phases(threads = 64)]
    pub fn powers(out: &mut [u32]) {
        for i in grid_stride(0..out.len()) {
            out[i] = POWERS[i % 4];
        }
        grid_sync();
        for i in grid_stride(0..out.len()) {
            out[i] += POWERS[(i + 1) % POWERS.len()];
        }
    }

    /// Never ends, though each of its phases does.
    #[grid_phases(threads = 64)]
    pub fn endless_phases(a: &mut [u32]) {
        loop {
            for i in grid_stride(0..a.len()) {
                a[i] += 1;
            }
            grid_sync();
        }
    }

    /// `phases` phases, each adding 1 to every element.
    #[grid_phases(threads = 64)]
    pub fn counted_phases(a: &mut [u32], phases: u32) {
        for _ in 0..phases {
            for i in grid_stride(0..a.len()) {
                a[i] += 1;
            }
            grid_sync();
        }
    }

    /// Writes past `a`'s end (a fault the thread runs on after), then never ends.
    #[grid_phases(threads = 64)]
    pub fn endless_phases_after_a_fault(a: &mut [u32]) {
        let n = a.len();
        if global_id() == 0 {
            a[n] = 1;
        }
        loop {
            for i in grid_stride(0..n) {
                a[i] += 1;
            }
            grid_sync();
        }
    }

    /// Never ends, and reaches no barrier.
    #[grid_phases(threads = 64)]
    pub fn endless_loop(a: &mut [u32]) {
        let mut x = 0u32;
        loop {
            x = x + 1;
            if x == 7 {
                a[global_id() as usize % a.len()] = x;
            }
        }
    }
}

/// Every kernel here.
pub fn all() -> Vec<&'static gsync::KernelSpec> {
    use edges::*;
    vec![
        &bump_in_an_arm::KERNEL,
        &get_in_a_value_match::KERNEL,
        &get_in_an_else_if::KERNEL,
        &assert_then_barrier::KERNEL,
        &wait_through_a_call::KERNEL,
        &powers::KERNEL,
        &endless_phases::KERNEL,
        &counted_phases::KERNEL,
        &endless_phases_after_a_fault::KERNEL,
        &endless_loop::KERNEL,
    ]
}

/// Calls `$run!` with the name of every check that takes only a `&Gpu`, so that each backend's
/// test file runs all of them.
#[macro_export]
macro_rules! with_every_hostile_check {
    ($run:ident) => {
        $run!(
            a_call_in_an_arm_runs_only_there,
            calls_in_conditions_read_only_where_rust_does,
            an_assert_before_an_inlined_barrier_reports_the_assertion,
            a_spin_condition_polls_through_a_call,
            a_lookup_table_reads_its_values,
        );
    };
}

/// The barriers a check runs under: the cooperative one, a software one, and the split form.
pub const BARRIERS: [Barrier; 3] = [Barrier::Cooperative, Barrier::Lbs, Barrier::MultiLaunch];

/// A device function in a match arm runs once per block, not once per thread.
pub fn a_call_in_an_arm_runs_only_there(gpu: &Gpu) {
    for barrier in BARRIERS {
        let mut counter = gpu.zeros::<u32>(1).unwrap();
        let launch = Launch::new().blocks(2).threads(32).barrier(barrier);
        edges::bump_in_an_arm::launch_with(gpu, &launch, &mut counter).unwrap();
        assert_eq!(gpu.download(&counter).unwrap(), [2], "{barrier}");
    }
}

/// Calls in a value match's arm and in an `else if` condition read only where Rust reads:
/// the keys past the table would be out-of-bounds reads otherwise.
pub fn calls_in_conditions_read_only_where_rust_does(gpu: &Gpu) {
    let table: Vec<u32> = (0..16).collect();
    let keys: Vec<u32> = (0..64u32).map(|i| if i % 3 == 0 { u32::MAX } else { i % 16 }).collect();
    let by_match: Vec<u32> = keys.iter().map(|&k| if k == u32::MAX { 0 } else { table[k as usize] }).collect();
    let by_else_if: Vec<u32> = keys
        .iter()
        .map(|&k| match table.get(k as usize) {
            None => 0,
            Some(&v) if v > 5 => 1,
            Some(_) => 2,
        })
        .collect();
    let (table, keys) = (gpu.upload(&table).unwrap(), gpu.upload(&keys).unwrap());
    for barrier in BARRIERS {
        let launch = Launch::new().blocks(2).threads(64).barrier(barrier);
        let mut out = gpu.zeros::<u32>(64).unwrap();
        edges::get_in_a_value_match::launch_with(gpu, &launch, &table, &keys, &mut out).unwrap();
        assert_eq!(gpu.download(&out).unwrap(), by_match, "{barrier}");
        let mut out = gpu.zeros::<u32>(64).unwrap();
        edges::get_in_an_else_if::launch_with(gpu, &launch, &table, &keys, &mut out).unwrap();
        assert_eq!(gpu.download(&out).unwrap(), by_else_if, "{barrier}");
    }
}

/// The failing thread runs on to the `grid_sync()` inside the device function, so the launch
/// reports the assertion instead of hanging (GPU) or a barrier mismatch (emulator).
pub fn an_assert_before_an_inlined_barrier_reports_the_assertion(gpu: &Gpu) {
    for barrier in BARRIERS {
        let mut a = gpu.upload(&[1u32, 0]).unwrap();
        let launch = Launch::new().blocks(2).threads(32).barrier(barrier);
        let error = edges::assert_then_barrier::launch_with(gpu, &launch, &mut a).unwrap_err();
        assert!(matches!(error, Error::AssertionFailed { .. }), "{barrier}: {error}");
        assert!(error.to_string().contains("thread 0 saw a[0] set"), "{barrier}: {error}");
        // The grid stopped at the barrier: nothing after it ran.
        assert_eq!(gpu.download(&a).unwrap(), [1, 0], "{barrier}");
        let mut a = gpu.upload(&[0u32, 0]).unwrap();
        edges::assert_then_barrier::launch_with(gpu, &launch, &mut a).unwrap();
        assert_eq!(gpu.download(&a).unwrap(), [0, 1], "{barrier}");
    }
}

/// A spin condition that calls a device function polls it again each time.
pub fn a_spin_condition_polls_through_a_call(gpu: &Gpu) {
    for barrier in BARRIERS {
        let mut flags = gpu.zeros::<u32>(1).unwrap();
        let mut out = gpu.zeros::<u32>(65).unwrap();
        let launch = Launch::new().blocks(2).threads(32).barrier(barrier);
        edges::wait_through_a_call::launch_with(gpu, &launch, &mut flags, &mut out).unwrap();
        assert_eq!(gpu.download(&out).unwrap(), vec![42; 65], "{barrier}");
    }
}

/// A module's `const` table reads the same in every phase and form.
pub fn a_lookup_table_reads_its_values(gpu: &Gpu) {
    const POWERS: [u32; 4] = [1, 2, 4, 8];
    let expected: Vec<u32> = (0..200).map(|i| POWERS[i % 4] + POWERS[(i + 1) % 4]).collect();
    for barrier in BARRIERS {
        let mut out = gpu.zeros::<u32>(200).unwrap();
        let launch = Launch::new().blocks(2).threads(64).barrier(barrier);
        edges::powers::launch_with(gpu, &launch, &mut out).unwrap();
        assert_eq!(gpu.download(&out).unwrap(), expected, "{barrier}");
    }
}

/// A kernel that never ends stops at its deadline with `Error::DeadlineExceeded`, naming the
/// phase it reached, under every barrier, whether or not it passes barriers.
pub fn a_kernel_that_never_ends_stops_at_its_deadline(gpu: &Gpu, deadline: Duration) {
    for barrier in BARRIERS {
        let launch = Launch::new().blocks(2).threads(64).barrier(barrier).deadline(Some(deadline));
        let mut a = gpu.zeros::<u32>(256).unwrap();
        let started = std::time::Instant::now();
        let error = edges::endless_phases::launch_with(gpu, &launch, &mut a).unwrap_err();
        let took = started.elapsed();
        let Error::DeadlineExceeded { kernel, phase, limit } = &error else {
            panic!("{barrier}: expected DeadlineExceeded, got {error}");
        };
        assert_eq!((kernel.as_str(), *limit), ("endless_phases", deadline), "{barrier}");
        assert!(*phase > 1, "{barrier}: the loop passed barriers before the deadline: {error}");
        assert!(took < deadline * 4 + Duration::from_secs(2), "{barrier}: stopped after {took:?}");
        assert!(took >= deadline, "{barrier}: stopped after {took:?}, before the deadline");
        // The kernel's work ran phase after phase until then.
        assert!(gpu.download(&a).unwrap().iter().all(|&v| v > 0), "{barrier}");
        if barrier == Barrier::MultiLaunch {
            continue; // `endless_loop` has no barrier to split at: its split form is one launch
        }
        let error = edges::endless_loop::launch_with(gpu, &launch, &mut a).unwrap_err();
        assert!(matches!(error, Error::DeadlineExceeded { phase: 1, .. }), "{barrier}: {error}");
        // A fault the kernel ran on after is the launch's error, and the deadline still stops it.
        let checked = launch.clone().bounds_checks(true);
        let error = edges::endless_phases_after_a_fault::launch_with(gpu, &checked, &mut a).unwrap_err();
        assert!(matches!(error, Error::OutOfBounds { .. }), "{barrier}: {error}");
    }
    // The deadline lifted, a kernel that ends is not stopped.
    let mut out = gpu.zeros::<u32>(200).unwrap();
    let launch = Launch::new().blocks(2).threads(64).deadline(None);
    edges::powers::launch_with(gpu, &launch, &mut out).unwrap();
    // Nor is one of many phases within its deadline: its checks see no time passed.
    for barrier in BARRIERS {
        let launch = Launch::new().blocks(8).threads(64).barrier(barrier).deadline(Some(deadline * 20));
        let mut a = gpu.zeros::<u32>(512).unwrap();
        edges::counted_phases::launch_with(gpu, &launch, &mut a, 300).unwrap();
        assert!(gpu.download(&a).unwrap().iter().all(|&v| v == 300), "{barrier}");
    }
}
