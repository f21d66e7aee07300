//! Names that meet something in the generated code: C++ keywords, CUDA math
//! functions, the prelude's macros and names, the generated `<slice>` length
//! parameters and loop helpers, raw and non-ASCII identifiers, the generated
//! module's items, and items of the user's crate. Every kernel runs on the
//! emulator here; tests/codegen.rs compiles the same kernels with NVRTC.
#![allow(dead_code, non_upper_case_globals, non_camel_case_types, non_snake_case)]

use gsync::prelude::*;

// Items of the user's crate that the generated module must not pick up.
static KERNEL: u32 = 0;
const value: u32 = 7;
const index: u64 = 7;
const wide: u64 = 7;
const launch: u32 = 7;
struct gpu;
struct Memory;
fn emulate() {}
fn launch_with() {}

/// C++ keywords as parameters and locals, and Rust keywords as raw identifiers.
#[grid_phases]
pub fn keywords(static_cast: &mut [u32], and_eq: u32, typeid: u32, r#for: u32) {
    let r#type = and_eq + typeid;
    let class = r#type * 2;
    for new in grid_stride(0..static_cast.len() as u32) {
        let delete = new + class;
        static_cast[new] = delete + r#for + r#new;
    }
}

/// Variables named like the CUDA functions their own methods become.
#[grid_phases]
pub fn math_names(sqrtf: &mut [f32], tanhf: f32, fminf: f32) {
    for i in grid_stride(0..sqrtf.len()) {
        let expf = sqrtf[i];
        let fmaxf = expf.max(fminf);
        sqrtf[i] = expf.sqrt() + tanhf.tanh() + expf.min(fminf) + fmaxf;
    }
}

/// The prelude's macros, typedefs, namespace and kernel parameters as user names.
#[grid_phases(threads = 64)]
pub fn prelude_names(
    gsync_status: &mut [u32],
    GSYNC_OK: u32,
    GSYNC_BLOCK_SIZE: u32,
    gsync_barrier: u32,
    gsync_barrier_state: u32,
    gsync: u32,
    u32: u32,
    threadIdx: u32,
    min: u32,
) {
    let blockDim = GSYNC_OK + GSYNC_BLOCK_SIZE;
    for i in grid_stride(0..gsync_status.len() as u32) {
        gsync_status[i] = blockDim + gsync_barrier + gsync_barrier_state;
    }
    grid_sync();
    for i in grid_stride(0..gsync_status.len() as u32) {
        gsync_status[i] += gsync + u32 + threadIdx + min.min(1000);
    }
}

/// The generated names' stems as user names: a slice's length, loop helpers,
/// a local array's fill index, and a shadowed name next to its numbered form.
#[grid_phases]
pub fn generated_names(a: &mut [u32], a_len: u32, gsync_a_len: u32, i_end: u32, gsync_i_end: u32, x_2: u32) {
    let mut buf = [a_len; 4];
    let gsync_buf_fill = 1u32;
    buf[1] = gsync_buf_fill;
    let x = gsync_a_len;
    let x = x + x_2;
    for i in grid_stride(0..a.len() as u32) {
        let mut sum = 0u32;
        for k in 0..4u32 {
            sum += buf[k];
        }
        a[i] = sum + x + i_end + gsync_i_end + i;
    }
}

/// Non-ASCII names, for the kernel itself and its variables.
#[grid_phases]
pub fn größe(λ: &mut [f32], größe: f32) {
    for ö in grid_stride(0..λ.len()) {
        let ü = λ[ö];
        λ[ö] = ü * größe;
    }
}

/// Parameters named like the generated module's items and locals.
#[grid_phases]
#[allow(clippy::too_many_arguments)]
pub fn module_names(
    KERNEL: &mut [u32],
    launch_with: u32,
    emulate: u32,
    launch: u32,
    multi_launch: u32,
    gpu: u32,
    args: u32,
    cuda_source: u32,
    max_coresident_blocks: u32,
    launch_oversubscribed: u32,
    functions: u32,
    value: u32,
) {
    let i = global_id();
    let total = launch_with + emulate + launch + multi_launch + gpu + args;
    let more = cuda_source + max_coresident_blocks + launch_oversubscribed + functions + value;
    if i < KERNEL.len() as u32 {
        KERNEL[i] = total + more;
    }
}

/// A kernel named like the module's items, its functions' module, and a C++ keyword.
#[grid_phases]
pub fn functions(out: &mut [u32]) {
    out[0] = 1;
}

#[grid_phases]
pub fn r#try(out: &mut [u32]) {
    out[0] = 2;
}

#[grid_phases]
pub fn sqrtf(out: &mut [f32]) {
    out[0] = 4.0f32.sqrt();
}

fn main() -> gsync::Result<()> {
    let device = Gpu::emulator();
    let small = Launch::new().blocks(2).threads(32);

    let mut out = device.zeros::<u32>(100)?;
    keywords::launch_with(&device, &small, &mut out, 1, 2, 10)?;
    let got = device.download(&out)?;
    assert_eq!(got, (0..100u32).map(|new| new + 6 + 10 + new).collect::<Vec<_>>());

    let mut x = device.upload(&[4.0f32, 9.0])?;
    math_names::launch_with(&device, &small, &mut x, 0.0, 5.0)?;
    let got = device.download(&x)?;
    assert_eq!(got, [2.0 + 4.0 + 5.0, 3.0 + 5.0 + 9.0]);

    let mut status = device.zeros::<u32>(64)?;
    prelude_names::launch(&device, &mut status, 1, 2, 3, 4, 5, 6, 7, 8)?;
    assert!(device.download(&status)?.iter().all(|&s| s == 1 + 2 + 3 + 4 + 5 + 6 + 7 + 8));

    let mut a = device.zeros::<u32>(50)?;
    generated_names::launch_with(&device, &small, &mut a, 10, 100, 1000, 10000, 5)?;
    let got = device.download(&a)?;
    assert_eq!(got, (0..50u32).map(|i| 10 + 1 + 10 + 10 + 100 + 5 + 1000 + 10000 + i).collect::<Vec<_>>());

    let mut l = device.upload(&[1.0f32, 2.0, 3.0])?;
    größe::launch_with(&device, &small, &mut l, 2.0)?;
    assert_eq!(device.download(&l)?, [2.0, 4.0, 6.0]);

    let mut k = device.zeros::<u32>(10)?;
    module_names::launch_with(&device, &small, &mut k, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11)?;
    assert!(device.download(&k)?.iter().all(|&v| v == 66));

    let mut one = device.zeros::<u32>(1)?;
    functions::launch_with(&device, &small, &mut one)?;
    assert_eq!(device.download(&one)?, [1]);
    r#try::launch_with(&device, &small, &mut one)?;
    assert_eq!(device.download(&one)?, [2]);
    let mut root = device.zeros::<f32>(1)?;
    sqrtf::launch_with(&device, &small, &mut root)?;
    assert_eq!(device.download(&root)?, [2.0]);

    // Each C name carries the Rust name it comes from.
    assert_eq!(keywords::KERNEL.name, "keywords");
    assert_eq!(keywords::KERNEL.symbol, "keywords_");
    assert_eq!(größe::KERNEL.symbol, "grXu00f6Xu00dfe_");
    assert!(math_names::KERNEL.checked_body.contains("sqrtf_[i_]"));
    assert!(generated_names::KERNEL.checked_body.contains("const usize gsync_a_len,"));
    assert!(generated_names::KERNEL.checked_body.contains("const u32 a_len_,"));
    assert_eq!(prelude_names::KERNEL.split.segments, ["prelude_names_segment_0_", "prelude_names_segment_1_"]);
    let _ = (KERNEL, value, index, wide, launch, gpu, Memory, emulate(), launch_with());
    Ok(())
}
