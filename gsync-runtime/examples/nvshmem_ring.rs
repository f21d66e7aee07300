//! A ring across the GPUs of this machine, through NVSHMEM: each PE writes its number into the
//! next PE's symmetric buffer with a store through `nvshmem_ptr`, then every PE checks what its
//! predecessor wrote, and the PEs agree on maxima with `NvshmemPe::agree_max`.
//!
//! Run it with no arguments: it starts itself once per PE (2 PEs, GPUs 0 and 1) and reports how
//! each ended. Needs 2 GPUs, NVRTC and NVSHMEM 3.8 (`pip install 'nvidia-nvshmem-cu13==3.8.0'
//! 'nvidia-nvjitlink==13.0.*'`, with PYTHONPATH naming that site-packages, or
//! GSYNC_NVSHMEM_DIR).

use std::ffi::c_void;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use cudarc::driver::{CudaContext, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::Ptx;
use gsync_runtime::__private::nvshmem::{
    launch_cooperative, link_kernel, load_module, run_local, Nvshmem, NvshmemPe, TeamEnv,
};

const PES: u32 = 2;

/// Thread 0 stores `round * 100 + pe` and then, with release semantics at system scope, the
/// round itself into the next PE's buffer, reached through `nvshmem_ptr`.
const RING: &str = r#"
#include <nvshmem.h>
extern "C" __global__ void ring(int* buffer, int round) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    const int me = nvshmem_my_pe(), next = (me + 1) % nvshmem_n_pes();
    int* remote = (int*)nvshmem_ptr(buffer, next);
    if (remote == nullptr) { buffer[2] = -1; return; }
    remote[0] = round * 100 + me;
    asm volatile("st.release.sys.global.s32 [%0], %1;" :: "l"(remote + 1), "r"(round) : "memory");
}
"#;

/// A kernel without NVSHMEM, which registering must refuse.
const PLAIN: &str = "extern \"C\" __global__ void plain(int* out) { out[0] = 1; }\n";

type Outcome = std::result::Result<bool, Box<dyn std::error::Error>>;

fn main() -> ExitCode {
    match TeamEnv::from_env() {
        None => launch(),
        Some(Ok(team)) => {
            let pe = team.pe;
            match run_pe(team) {
                Ok(true) => ExitCode::SUCCESS,
                Ok(false) => ExitCode::FAILURE,
                Err(error) => {
                    println!("PE {pe}: FAIL: {error}");
                    ExitCode::FAILURE
                }
            }
        }
        Some(Err(error)) => {
            println!("FAIL: {error}");
            ExitCode::FAILURE
        }
    }
}

/// Starts the team and reports how each PE ended.
fn launch() -> ExitCode {
    println!("starting a team of {PES} PEs on this machine");
    match run_local(PES) {
        Ok(outcome) => {
            println!("team: {outcome}");
            match outcome.into_result() {
                Ok(()) => {
                    println!("PASS: the team of {PES} PEs");
                    ExitCode::SUCCESS
                }
                Err(error) => {
                    println!("FAIL: {error}");
                    ExitCode::FAILURE
                }
            }
        }
        Err(error) => {
            println!("FAIL: {error}");
            ExitCode::FAILURE
        }
    }
}

/// Prints a PASS or FAIL line and returns whether it passed.
fn check(pe: u32, what: &str, passed: bool, detail: String) -> bool {
    println!(
        "PE {pe}: {}: {what}{}",
        if passed { "PASS" } else { "FAIL" },
        if passed { String::new() } else { format!(" ({detail})") }
    );
    passed
}

fn run_pe(team: TeamEnv) -> Outcome {
    let nvshmem = Nvshmem::load()?;
    let (major, minor, patch) = nvshmem.release();
    // Says why when there is no driver or no such GPU, where cudarc would panic.
    drop(gsync_runtime::Gpu::cuda(team.gpu as usize)?);
    let context = CudaContext::new(team.gpu as usize)?;
    println!(
        "PE {} of {}: {} (GPU {}), NVSHMEM {major}.{minor}.{patch} from {}, nvJitLink {:?}",
        team.pe,
        team.n_pes,
        context.name()?,
        team.gpu,
        nvshmem.dir().display(),
        nvshmem.nvjitlink_version()
    );
    let pe = NvshmemPe::init(nvshmem, &context, &team, Duration::from_secs(60))?;
    let (me, n) = (pe.pe(), pe.n_pes());
    let mut passed = true;

    let buffer = pe.malloc(4 * std::mem::size_of::<i32>())?;
    let next = (me + 1) % n;
    let reachable = pe.peer_ptr(buffer, next).is_some();
    passed &= check(me, "nvshmem_ptr reaches the next PE", reachable, "None".into());

    let (cc_major, cc_minor) = context.compute_capability()?;
    let arch = (cc_major as u32, cc_minor as u32);
    let started = std::time::Instant::now();
    let compiled = link_kernel(nvshmem, RING, "ring", arch)?;
    println!(
        "PE {me}: linked `ring` for sm_{cc_major}{cc_minor} in {:?} ({} bytes)",
        started.elapsed(),
        compiled.cubin.len()
    );

    // Round 1: a RawModule, launched with launch_cooperative.
    let module = load_module(&context, &compiled.cubin)?;
    pe.register_module(&module)?;
    let function = module.function("ring")?;
    let stream = context.new_stream()?;
    let (mut buffer_arg, mut round) = (buffer, 1i32);
    let mut params = [(&mut buffer_arg as *mut u64).cast::<c_void>(), (&mut round as *mut i32).cast::<c_void>()];
    // SAFETY: the parameters are the kernel's (int*, int), and the buffer outlives the launch,
    // which barrier_all waits for.
    unsafe { launch_cooperative(&function, (1, 1, 1), (32, 1, 1), 0, &stream, &mut params)? };
    pe.barrier_all()?;
    passed &= check_ring(&pe, &context, buffer, 1)?;

    // Round 2: the same CUBIN through cudarc's safe layer, registered by its function.
    let cuda_module = context.load_module(Ptx::from_binary(compiled.cubin.clone()))?;
    let registered = pe.register_function(&cuda_module.load_function("ring")?)?;
    let round = 2i32;
    let mut builder = stream.launch_builder(registered.function());
    builder.arg(&buffer).arg(&round);
    let config = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (32, 1, 1), shared_mem_bytes: 0 };
    // SAFETY: as above.
    unsafe { builder.launch_cooperative(config)? };
    pe.barrier_all()?;
    passed &= check_ring(&pe, &context, buffer, 2)?;

    let plain = gsync_runtime::compile(PLAIN, "plain", arch)?;
    let refused = pe.register_module(&load_module(&context, &plain.cubin)?);
    let detail = format!("{refused:?}");
    passed &= check(me, "a module without NVSHMEM is refused", refused.is_err(), detail);

    let agreed = pe.agree_max(&[u64::from(me), 100 - u64::from(me), u64::MAX - u64::from(me)])?;
    let expected = vec![u64::from(n - 1), 100, u64::MAX];
    passed &= check(me, "agree_max of 3 values", agreed == expected, format!("{agreed:?}, expected {expected:?}"));
    let long: Vec<u64> = (0..600).map(|index| !(index * 10 + u64::from(me))).collect();
    let minima: Vec<u64> = pe.agree_max(&long)?.into_iter().map(|value| !value).collect();
    let expected: Vec<u64> = (0..600).map(|index| index * 10).collect();
    passed &= check(
        me,
        "agree_max of 600 values (the minimum, by complement)",
        minima == expected,
        format!("{:?}", &minima[..4]),
    );
    let mismatch = pe.agree_max(&vec![0; 1 + me as usize]);
    passed &= check(
        me,
        "agree_max with different lengths is refused on every PE",
        mismatch.is_err(),
        format!("{mismatch:?}"),
    );

    drop(registered);
    pe.free(buffer)?;
    drop(module);
    drop(pe);
    println!("PE {me}: {}", if passed { "PASS" } else { "FAIL" });
    Ok(passed)
}

/// Whether this PE's buffer holds what its predecessor wrote in `round`.
fn check_ring(pe: &NvshmemPe, context: &Arc<CudaContext>, buffer: u64, round: i32) -> Outcome {
    let (me, n) = (pe.pe(), pe.n_pes());
    let mut host = [0i32; 4];
    context.bind_to_thread()?;
    // SAFETY: `buffer` holds 4 ints of this context, and no kernel writes it now.
    unsafe { cudarc::driver::result::memcpy_dtoh_sync(&mut host[..], buffer)? };
    let previous = ((me + n - 1) % n) as i32;
    let expected = [round * 100 + previous, round];
    let what = format!("round {round}: PE {previous} wrote {} into this PE's buffer", expected[0]);
    Ok(check(me, &what, host[..2] == expected && host[2] == 0, format!("found {host:?}")))
}
