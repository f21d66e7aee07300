//! Every atomic the macro accepts, for every element type and memory ordering it accepts it
//! with: `atomic_add`, `atomic_max`, `atomic_min`, `atomic_exch` and `atomic_cas` under each
//! ordering (none, `Relaxed`, `Acquire`, `Release`, `AcqRel`, `SeqCst`; half precision takes
//! only the relaxed ones, `atomic_cas` only integers), and `load_acquire`, `store_release`,
//! `load_relaxed` and `store_relaxed` on all twelve element types. Each kernel compiles through
//! NVRTC and runs on the emulator against the same operations in Rust, NaN operands and
//! elements included.

use gsync::__private::nvrtc_or_skip;
use gsync::prelude::*;
use gsync::{DeviceScalar, KernelSpec, Result};

/// Stamps one kernel: thread 0 runs, on `a[k]` for the `k`-th ordering, add `v`, max `w`,
/// min `v`, exch `w`, min `v` and, where the ordering names a `cas` binding, cas from `v` to
/// `w`, writing each old value to `old[6 * k..]`; then on `m`: `load_acquire(0)`,
/// `store_release(1, v)`, `load_relaxed(1)`, `store_relaxed(2, w)`, the two loads to the end of
/// `old`.
macro_rules! matrix_kernel {
    ($name:ident, $t:ident, [$($k:tt $order:ident $($cas:ident)?),*]) => {
        /// One element type's atomics under each ordering it takes, and its ordered accesses.
        #[grid_phases]
        pub fn $name(a: &mut [$t], m: &mut [$t], old: &mut [$t], v: $t, w: $t) {
            if global_id() == 0 {
                $(
                    let added = a.atomic_add($k, v, Ordering::$order);
                    old[$k * 6] = added;
                    let raised = a.atomic_max($k, w, Ordering::$order);
                    old[$k * 6 + 1] = raised;
                    let lowered = a.atomic_min($k, v, Ordering::$order);
                    old[$k * 6 + 2] = lowered;
                    let exchanged = a.atomic_exch($k, w, Ordering::$order);
                    old[$k * 6 + 3] = exchanged;
                    let lowered_again = a.atomic_min($k, v, Ordering::$order);
                    old[$k * 6 + 4] = lowered_again;
                    $(
                        let $cas = a.atomic_cas($k, v, w, Ordering::$order);
                        old[$k * 6 + 5] = $cas;
                    )?
                )*
                let first = m.load_acquire(0);
                m.store_release(1, v);
                let second = m.load_relaxed(1);
                m.store_relaxed(2, w);
                let n = old.len();
                old[n - 2] = first;
                old[n - 1] = second;
            }
        }
    };
}

matrix_kernel!(ints_i32, i32, [0 Relaxed swapped, 1 Acquire swapped, 2 Release swapped, 3 AcqRel swapped, 4 SeqCst swapped]);
matrix_kernel!(ints_u32, u32, [0 Relaxed swapped, 1 Acquire swapped, 2 Release swapped, 3 AcqRel swapped, 4 SeqCst swapped]);
matrix_kernel!(ints_i64, i64, [0 Relaxed swapped, 1 Acquire swapped, 2 Release swapped, 3 AcqRel swapped, 4 SeqCst swapped]);
matrix_kernel!(ints_u64, u64, [0 Relaxed swapped, 1 Acquire swapped, 2 Release swapped, 3 AcqRel swapped, 4 SeqCst swapped]);
matrix_kernel!(floats_f32, f32, [0 Relaxed, 1 Acquire, 2 Release, 3 AcqRel, 4 SeqCst]);
matrix_kernel!(floats_f64, f64, [0 Relaxed, 1 Acquire, 2 Release, 3 AcqRel, 4 SeqCst]);
matrix_kernel!(halves_f16, f16, [0 Relaxed]);
matrix_kernel!(halves_bf16, bf16, [0 Relaxed]);
matrix_kernel!(accesses_u8, u8, []);
matrix_kernel!(accesses_i8, i8, []);
matrix_kernel!(accesses_u16, u16, []);
matrix_kernel!(accesses_i16, i16, []);

/// Add, max and min in Rust.
type Ops<T> = (fn(T, T) -> T, fn(T, T) -> T, fn(T, T) -> T);

/// A kernel's launch function.
type Kernel<T> =
    fn(&Gpu, &mut DeviceBuffer<T>, &mut DeviceBuffer<T>, &mut DeviceBuffer<T>, T, T) -> Result<LaunchReport>;

/// The old values and the final element of the kernels' sequence on one element, in Rust.
fn reference<T: Copy + PartialEq>([init, v, w]: [T; 3], (add, max, min): Ops<T>, cas: bool) -> (Vec<T>, T) {
    let mut element = init;
    let mut olds = Vec::new();
    let mut apply = |f: &dyn Fn(T) -> T| {
        olds.push(element);
        element = f(element);
    };
    apply(&|x| add(x, v));
    apply(&|x| max(x, w));
    apply(&|x| min(x, v));
    apply(&|_| w);
    apply(&|x| min(x, v));
    if cas {
        apply(&|x| if x == v { w } else { x });
    }
    (olds, element)
}

/// Runs `kernel` on the emulator with `orderings` elements, all `init`, and operands `v` and
/// `w`; checks every old value, every final element and the ordered accesses against
/// [`reference`] (with `ops`, and `cas` where the kernel has it). Values compare by their
/// `Debug` text, so that NaN is NaN and -0.0 is not 0.0.
fn check<T>(kernel: Kernel<T>, orderings: usize, [init, v, w]: [T; 3], ops: Option<Ops<T>>, cas: bool)
where
    T: DeviceScalar + PartialEq + std::fmt::Debug,
{
    let gpu = Gpu::emulator();
    let mut a = gpu.upload(&vec![init; orderings]).unwrap();
    let mut m = gpu.upload(&[init; 3]).unwrap();
    let mut old = gpu.upload(&vec![init; 6 * orderings + 2]).unwrap();
    kernel(&gpu, &mut a, &mut m, &mut old, v, w).unwrap();
    let mut expected_old = Vec::new();
    let mut expected_a = Vec::new();
    for _ in 0..orderings {
        let (mut olds, last) = reference([init, v, w], ops.expect("a kernel with atomics has their operations"), cas);
        olds.resize(6, init);
        expected_old.extend(olds);
        expected_a.push(last);
    }
    expected_old.extend([init, v]);
    let text = |values: &[T]| format!("{values:?}");
    assert_eq!(text(&gpu.download(&old).unwrap()), text(&expected_old), "old values");
    assert_eq!(text(&gpu.download(&a).unwrap()), text(&expected_a), "final elements");
    assert_eq!(text(&gpu.download(&m).unwrap()), text(&[init, v, w]), "ordered accesses");
}

fn int_ops<T: Ord + Copy>(wrapping_add: fn(T, T) -> T) -> Option<Ops<T>> {
    Some((wrapping_add, Ord::max, Ord::min))
}

#[test]
fn integer_atomics_under_every_ordering_match_rust() {
    check(ints_i32::launch, 5, [10, 7, 20], int_ops(i32::wrapping_add), true);
    check(ints_u32::launch, 5, [10, 7, 20], int_ops(u32::wrapping_add), true);
    check(ints_i64::launch, 5, [-10, 7, 1 << 40], int_ops(i64::wrapping_add), true);
    check(ints_u64::launch, 5, [u64::MAX, 7, 1 << 40], int_ops(u64::wrapping_add), true);
}

#[test]
fn float_atomics_under_every_ordering_match_rust_with_nan() {
    check(floats_f32::launch, 5, [1.5, -2.25, f32::NAN], Some((|x, y| x + y, f32::max, f32::min)), false);
    check(floats_f64::launch, 5, [1.5, -2.25, f64::NAN], Some((|x, y| x + y, f64::max, f64::min)), false);
    let [one_and_a_half, minus] = [1.5, -2.25].map(f16::from_f32);
    let f16_ops: Ops<f16> = (|x, y| x + y, f16::max, f16::min);
    check(halves_f16::launch, 1, [one_and_a_half, minus, f16::NAN], Some(f16_ops), false);
    let [one_and_a_half, minus] = [1.5, -2.25].map(bf16::from_f32);
    let bf16_ops: Ops<bf16> = (|x, y| x + y, bf16::max, bf16::min);
    check(halves_bf16::launch, 1, [one_and_a_half, minus, bf16::NAN], Some(bf16_ops), false);
}

#[test]
fn ordered_accesses_of_narrow_integers_match_rust() {
    check(accesses_u8::launch, 0, [10, 7, 200], None, false);
    check(accesses_i8::launch, 0, [10, -7, 100], None, false);
    check(accesses_u16::launch, 0, [10, 7, 60_000], None, false);
    check(accesses_i16::launch, 0, [10, -7, 30_000], None, false);
}

#[test]
fn every_combination_compiles_through_nvrtc() {
    if !nvrtc_or_skip() {
        return;
    }
    let kernels: [&KernelSpec; 12] = [
        &ints_i32::KERNEL,
        &ints_u32::KERNEL,
        &ints_i64::KERNEL,
        &ints_u64::KERNEL,
        &floats_f32::KERNEL,
        &floats_f64::KERNEL,
        &halves_f16::KERNEL,
        &halves_bf16::KERNEL,
        &accesses_u8::KERNEL,
        &accesses_i8::KERNEL,
        &accesses_u16::KERNEL,
        &accesses_i16::KERNEL,
    ];
    let failures: Vec<String> = kernels
        .iter()
        .flat_map(|kernel| [(8, 0), (9, 0)].map(move |arch| (kernel, arch)))
        .filter_map(|(kernel, arch)| {
            let source = kernel.source(Barrier::Cooperative, kernel.default_block_size());
            gsync::compile(&source, kernel.name, arch)
                .err()
                .map(|error| format!("{} (sm_{}{}): {error}", kernel.name, arch.0, arch.1))
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
