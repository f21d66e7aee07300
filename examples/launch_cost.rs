//! What a launch costs the host, gsync beside cudarc in one run: a one-phase kernel that adds 1
//! to one word, 132 × 256 (one block per SM of an H100/H200, any grid given by `--blocks`).
//!
//! Rows, each the median over `--reps` rounds of `--launches` launches, in µs of host wall
//! time per launch:
//! - gsync blocking: `launch_with` (status word read after each launch);
//! - gsync queued: `submit_with` alone (the launches waited for after the round, outside the
//!   window), in batches of `--batch`;
//! - gsync graph: a batch captured once (`Gpu::capture`) and replayed, waiting for each replay;
//! - cudarc queued: `launch_builder(..).launch(..)` of the same kernel, compiled from the same
//!   C, alone, and with two timing events recorded beside it (a gsync launch's report holds
//!   the time between two such events);
//! - cudarc blocking: launch then `synchronize`, and launch, 4-byte copy to the host and
//!   `synchronize` (what reading a status word costs).
//!
//! Every round's word is checked against the number of launches. Needs a CUDA GPU.
//!
//! ```text
//! cargo run --release --example launch_cost -- --launches 2000
//! ```

mod common;

use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;
use gsync::cudarc::driver::{CudaFunction, CudaSlice, CudaStream, LaunchConfig, PushKernelArg};
use gsync::cudarc::nvrtc::Ptx;
use gsync::prelude::*;

/// Host cost per launch, gsync beside cudarc.
#[derive(Parser)]
struct Args {
    /// Launches per round.
    #[arg(long, default_value_t = 2000)]
    launches: usize,
    /// Launches queued before they are waited for, in the queued gsync row.
    #[arg(long, default_value_t = 100)]
    batch: usize,
    /// Rounds; the median is reported.
    #[arg(long, default_value_t = 7)]
    reps: usize,
    /// Blocks per launch.
    #[arg(long, default_value_t = 132)]
    blocks: u32,
    /// Threads per block.
    #[arg(long, default_value_t = 256)]
    threads: u32,
}

/// The kernel: thread 0 of the grid adds 1 to the word.
#[grid_phases]
fn bump_word(word: &mut [u32]) {
    if global_id() == 0 {
        word[0] = word[0] + 1;
    }
}

/// The same kernel in C, for cudarc.
const BUMP_WORD_C: &str = r#"extern "C" __global__ void bump_word_c(unsigned int* word) {
    if (blockIdx.x == 0 && threadIdx.x == 0) { word[0] += 1u; }
}"#;

fn main() -> ExitCode {
    common::exit_code(run(&Args::parse()))
}

fn run(args: &Args) -> Result<(), common::AnyError> {
    let gpu = Gpu::new(0)?;
    if gpu.backend() != Backend::Cuda {
        return Err("launch_cost compares gsync with cudarc's launches and needs a CUDA GPU".into());
    }
    let info = gpu.info();
    println!(
        "# Host cost per launch, {} launches per round, {} × {}, {}",
        args.launches, args.blocks, args.threads, info.name
    );
    let launch = Launch::new().blocks(args.blocks).threads(args.threads).barrier(Barrier::Lbs);
    let mut word = gpu.zeros::<u32>(1)?;
    let (n, batch) = (args.launches, args.batch.max(1));
    let mut rows: Vec<(&str, Duration)> = Vec::new();

    let blocking = rounds(args.reps, || {
        let start = Instant::now();
        for _ in 0..n {
            bump_word::launch_with(&gpu, &launch, &mut word)?;
        }
        Ok(start.elapsed())
    });
    rows.push(("gsync, blocking (`launch_with`, status read)", checked(&gpu, &mut word, blocking?, n, args.reps)?));

    // A pending launch borrows its buffers, so the queued row gives each launch of a batch a
    // word of its own.
    let mut words: Vec<DeviceBuffer<u32>> = (0..batch).map(|_| gpu.zeros::<u32>(1)).collect::<gsync::Result<_>>()?;
    let queued = rounds(args.reps, || {
        let mut window = Duration::ZERO;
        let mut done = 0;
        while done < n {
            let count = batch.min(n - done);
            let start = Instant::now();
            let mut pending = Vec::with_capacity(count);
            for word in words.iter_mut().take(count) {
                pending.push(bump_word::submit_with(&gpu, &launch, word)?);
            }
            window += start.elapsed();
            for handle in pending {
                handle.wait()?;
            }
            done += count;
        }
        Ok(window)
    })?;
    let mut counted = 0;
    for word in &words {
        counted += gpu.download(word)?[0] as usize;
    }
    if counted != n * (args.reps + 1) {
        return Err(format!("the queued launches counted {counted}, not {}", n * (args.reps + 1)).into());
    }
    rows.push(("gsync, queued (`submit_with`)", per_launch(queued, n)));

    // The same batches captured once into a CUDA graph and replayed: host time per launch.
    let graphed = {
        let capture = gpu.capture()?;
        let mut recorded = Vec::with_capacity(batch);
        for word in words.iter_mut() {
            recorded.push(bump_word::submit_with(capture.gpu(), &launch, word)?);
        }
        let graph = capture.finish(recorded)?;
        let replays = n.div_ceil(batch);
        let times = rounds(args.reps, || {
            let start = Instant::now();
            for _ in 0..replays {
                graph.replay()?;
            }
            Ok(start.elapsed())
        })?;
        per_launch(times, replays * batch)
    };
    let replayed = n.div_ceil(batch) * batch * (args.reps + 1);
    let mut counted_again = 0;
    for word in &words {
        counted_again += gpu.download(word)?[0] as usize;
    }
    if counted_again != counted + replayed {
        return Err(format!("the graph's launches counted {}, not {replayed}", counted_again - counted).into());
    }
    rows.push(("gsync, captured graph replayed (`Gpu::capture`, waited per replay)", graphed));

    let (stream, function) = cudarc_kernel(&gpu)?;
    let mut raw: CudaSlice<u32> = stream.alloc_zeros(1)?;
    let config = LaunchConfig { grid_dim: (args.blocks, 1, 1), block_dim: (args.threads, 1, 1), shared_mem_bytes: 0 };
    let mut cudarc_row = |name: &'static str, after: &After| {
        let times = rounds(args.reps, || {
            stream.memset_zeros(&mut raw)?;
            stream.synchronize()?;
            let start = Instant::now();
            for _ in 0..n {
                let mut builder = stream.launch_builder(&function);
                builder.arg(&mut raw);
                // SAFETY: the kernel takes one `unsigned int*`, which `raw` is.
                unsafe { builder.launch(config) }?;
                after(&stream, &raw)?;
            }
            let elapsed = start.elapsed();
            stream.synchronize()?;
            let got = stream.clone_dtoh(&raw)?[0];
            if got as usize != n {
                return Err(format!("{name}: the word is {got} after {n} launches").into());
            }
            Ok(elapsed)
        })?;
        rows.push((name, per_launch(times, n)));
        Ok::<(), common::AnyError>(())
    };
    cudarc_row("cudarc, queued (`launch`)", &|_, _| Ok(()))?;
    // What a gsync launch's report costs at the least: two timing events beside the launch.
    let events = (gpu.cuda_context()?.new_event(None)?, gpu.cuda_context()?.new_event(None)?);
    cudarc_row("cudarc, queued, with two timing events", &|stream, _| {
        events.0.record(stream)?;
        Ok(events.1.record(stream)?)
    })?;
    cudarc_row("cudarc, launch + synchronize", &|stream, _| Ok(stream.synchronize()?))?;
    cudarc_row("cudarc, launch + 4-byte copy + synchronize", &|stream, raw| {
        let mut word = [0u32];
        stream.memcpy_dtoh(raw, &mut word)?;
        Ok(stream.synchronize()?)
    })?;

    println!("| launch | µs per launch |\n|---|---:|");
    for (name, time) in &rows {
        println!("| {name} | {:.2} |", time.as_secs_f64() * 1e6);
    }
    let find = |prefix: &str| rows.iter().find(|(name, _)| name.starts_with(prefix)).map(|row| row.1);
    if let (Some(ours), Some(theirs)) = (find("gsync, queued"), find("cudarc, queued (")) {
        println!("queued: gsync / cudarc = {:.2}× (target ≤ 1.5×)", ours.as_secs_f64() / theirs.as_secs_f64());
    }
    if let Some(blocking) = find("gsync, blocking") {
        println!("blocking: {:.2} µs (target ≤ 16 µs)", blocking.as_secs_f64() * 1e6);
    }
    Ok(())
}

/// What the cudarc rows do after each launch.
type After<'a> = dyn Fn(&Arc<CudaStream>, &CudaSlice<u32>) -> Result<(), common::AnyError> + 'a;

/// `times` (one per round) as the median per launch.
fn per_launch(times: Vec<Duration>, launches: usize) -> Duration {
    common::median(times).unwrap_or_default() / launches.max(1) as u32
}

/// Runs `round` `reps` times after one warm-up, returning each timed round's window.
fn rounds(
    reps: usize,
    mut round: impl FnMut() -> Result<Duration, common::AnyError>,
) -> Result<Vec<Duration>, common::AnyError> {
    round()?;
    (0..reps).map(|_| round()).collect()
}

/// The median per launch of `times`, after checking that the word counted every launch of the
/// warm-up and the timed rounds; the word is zeroed for the next row.
fn checked(
    gpu: &Gpu,
    word: &mut DeviceBuffer<u32>,
    times: Vec<Duration>,
    launches: usize,
    reps: usize,
) -> Result<Duration, common::AnyError> {
    let got = gpu.download(word)?[0] as usize;
    if got != launches * (reps + 1) {
        return Err(format!("the word is {got} after {} launches", launches * (reps + 1)).into());
    }
    gpu.fill_zeros(word)?;
    Ok(per_launch(times, launches))
}

/// The C kernel compiled by gsync's NVRTC and loaded through cudarc on gsync's context, with a
/// stream of its own.
fn cudarc_kernel(gpu: &Gpu) -> Result<(Arc<CudaStream>, CudaFunction), common::AnyError> {
    let context = gpu.cuda_context()?;
    let (major, minor) = gpu.info().compute_capability;
    let compiled = gsync::compile(BUMP_WORD_C, "bump_word_c", (major, minor))?;
    let module = context.load_module(Ptx::from_binary(compiled.cubin))?;
    let function = module.load_function("bump_word_c")?;
    Ok((context.new_stream()?, function))
}
