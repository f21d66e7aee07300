//! A gsync kernel on memory that another CUDA library allocated: plain cudarc opens a context
//! and a stream and fills two `CudaSlice`s; gsync runs on that context and stream, takes the
//! slices over without a copy, smooths them with the library kernel, and hands them back, and
//! cudarc reads the result, verified against the CPU bit for bit.
//!
//! Without a CUDA GPU it runs the emulator's counterpart: host vectors moved into gsync
//! buffers and back, again without a copy.
//!
//! ```text
//! cargo run --release --example cudarc_interop -- --n 1000000 --rounds 100
//! ```

mod common;

use clap::Parser;
use gsync::cudarc::driver::CudaContext;
use gsync::kernels::{smooth, smooth_reference};
use gsync::prelude::*;
use std::process::ExitCode;

/// Smooths data that cudarc allocated (or, without a GPU, host vectors) and checks it.
#[derive(Parser)]
struct Args {
    /// Number of elements.
    #[arg(long, default_value_t = 1 << 16)]
    n: usize,
    /// Number of smoothing rounds, one phase each.
    #[arg(long, default_value_t = 50)]
    rounds: u32,
}

fn main() -> ExitCode {
    let args = Args::parse();
    common::exit_code(run(&args))
}

fn run(args: &Args) -> Result<(), common::AnyError> {
    let input = common::xorshift_floats(args.n);
    // `Gpu::new` checks for the driver and a GPU without panicking; cudarc alone would abort
    // where the driver library is missing.
    let probe = Gpu::new(0)?;
    let result = match probe.backend() {
        Backend::Cuda => {
            drop(probe);
            on_cudarc_memory(&input, args.rounds)?
        }
        Backend::Emulator => {
            println!("no CUDA GPU: the cudarc path needs one; running the emulator's counterpart (host vectors)");
            on_host_vectors(&probe, &input, args.rounds)?
        }
    };
    let expected = smooth_reference(&input, args.rounds);
    if !common::same_bits(&result, &expected) {
        let i = (0..args.n).find(|&i| result[i].to_bits() != expected[i].to_bits()).unwrap_or(0);
        return Err(format!("mismatch at index {i}: {} vs CPU {}", result[i], expected[i]).into());
    }
    println!("verified: all {} elements match the CPU bit for bit", args.n);
    Ok(())
}

/// The CUDA path: the memory is cudarc's before and after the launch.
fn on_cudarc_memory(input: &[f32], rounds: u32) -> Result<Vec<f32>, common::AnyError> {
    // What another cudarc-based library would have: its context, its stream, its slices.
    let context = CudaContext::new(0)?;
    let stream = context.new_stream()?;
    let a = stream.clone_htod(input)?;
    let b = stream.alloc_zeros::<f32>(input.len())?;

    let gpu = Gpu::from_cudarc(context, stream.clone())?;
    println!("{} over the library's context and stream", gpu.info().name);
    let (mut a, mut b) = (gpu.adopt_cudarc(a)?, gpu.adopt_cudarc(b)?); // no copies
    let report = smooth::launch(&gpu, &mut a, &mut b, rounds)?;
    println!("grid: {} blocks × {} threads, barrier: {}", report.blocks, report.threads, report.barrier);
    let (a, b) = (gpu.release_cudarc(a)?, gpu.release_cudarc(b)?); // no copies either

    // Back in the library's hands: it reads the result on its own stream.
    let result = stream.clone_dtoh(if rounds.is_multiple_of(2) { &a } else { &b })?;
    println!("cudarc read {} elements back from the slices gsync wrote", result.len());
    Ok(result)
}

/// The emulator's counterpart: host vectors in the role of the slices.
fn on_host_vectors(gpu: &Gpu, input: &[f32], rounds: u32) -> Result<Vec<f32>, common::AnyError> {
    let (a, b) = (input.to_vec(), vec![0.0f32; input.len()]);
    let (mut a, mut b) = (gpu.adopt_vec(a)?, gpu.adopt_vec(b)?); // no copies
    smooth::launch(gpu, &mut a, &mut b, rounds)?;
    let (a, b) = (gpu.release_vec(a)?, gpu.release_vec(b)?); // no copies either
    Ok(if rounds.is_multiple_of(2) { a } else { b })
}
