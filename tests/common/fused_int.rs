//! The fused 32-bit integer builtins (`max3`, `add_max`, the `_relu` forms; Hopper's DPX
//! instructions) on every triple of edge values and on random ones, against plain Rust that
//! computes each sum in 64 bits and truncates it: the wrapping 32-bit add of the hardware.

use super::checks::{random_vec, rng, Scale};
use gsync::prelude::*;

/// Results per input triple of [`fused_i32`].
pub const I32_RESULTS: usize = 10;

/// Results per input triple of [`fused_u32`].
pub const U32_RESULTS: usize = 4;

/// Every fused builtin of `i32`, on `(a[i], b[i], c[i])`, into `out[10 i ..]`.
#[grid_phases]
pub fn fused_i32(a: &[i32], b: &[i32], c: &[i32], out: &mut [i32]) {
    for i in grid_stride(0..a.len()) {
        let x = a[i];
        let y = b[i];
        let z = c[i];
        let o = i * 10;
        out[o] = max3(x, y, z);
        out[o + 1] = min3(x, y, z);
        out[o + 2] = max_relu(x, y);
        out[o + 3] = min_relu(x, y);
        out[o + 4] = max3_relu(x, y, z);
        out[o + 5] = min3_relu(x, y, z);
        out[o + 6] = add_max(x, y, z);
        out[o + 7] = add_min(x, y, z);
        out[o + 8] = add_max_relu(x, y, z);
        out[o + 9] = add_min_relu(x, y, z);
    }
}

/// Every fused builtin of `u32`, on `(a[i], b[i], c[i])`, into `out[4 i ..]`.
#[grid_phases]
pub fn fused_u32(a: &[u32], b: &[u32], c: &[u32], out: &mut [u32]) {
    for i in grid_stride(0..a.len()) {
        let x = a[i];
        let y = b[i];
        let z = c[i];
        let o = i * 4;
        out[o] = max3(x, y, z);
        out[o + 1] = min3(x, y, z);
        out[o + 2] = add_max(x, y, z);
        out[o + 3] = add_min(x, y, z);
    }
}

/// `x + y` as a 32-bit adder gives it: the 64-bit sum's low 32 bits.
fn sum_i32(x: i32, y: i32) -> i32 {
    (i64::from(x) + i64::from(y)) as i32
}

fn sum_u32(x: u32, y: u32) -> u32 {
    (u64::from(x) + u64::from(y)) as u32
}

fn relu(v: i32) -> i32 {
    if v < 0 {
        0
    } else {
        v
    }
}

fn largest<T: Ord + Copy>(values: &[T]) -> T {
    *values.iter().max().expect("some values")
}

fn smallest<T: Ord + Copy>(values: &[T]) -> T {
    *values.iter().min().expect("some values")
}

/// CPU reference for [`fused_i32`], in its order.
pub fn fused_i32_reference(x: i32, y: i32, z: i32) -> [i32; I32_RESULTS] {
    let s = sum_i32(x, y);
    [
        largest(&[x, y, z]),
        smallest(&[x, y, z]),
        largest(&[x, y, 0]),
        relu(smallest(&[x, y])),
        largest(&[x, y, z, 0]),
        relu(smallest(&[x, y, z])),
        largest(&[s, z]),
        smallest(&[s, z]),
        largest(&[s, z, 0]),
        relu(smallest(&[s, z])),
    ]
}

/// CPU reference for [`fused_u32`], in its order.
pub fn fused_u32_reference(x: u32, y: u32, z: u32) -> [u32; U32_RESULTS] {
    let s = sum_u32(x, y);
    [largest(&[x, y, z]), smallest(&[x, y, z]), largest(&[s, z]), smallest(&[s, z])]
}

const I32_EDGES: [i32; 11] = [i32::MIN, i32::MIN + 1, -65_536, -2, -1, 0, 1, 2, 65_535, i32::MAX - 1, i32::MAX];

const U32_EDGES: [u32; 8] = [0, 1, 2, 65_535, 0x7fff_ffff, 0x8000_0000, u32::MAX - 1, u32::MAX];

/// Every triple of `edges`, then `random` random triples, as three columns.
fn triples<T: Copy>(edges: &[T], random: [Vec<T>; 3]) -> [Vec<T>; 3] {
    let [mut a, mut b, mut c] = [Vec::new(), Vec::new(), Vec::new()];
    for &x in edges {
        for &y in edges {
            for &z in edges {
                a.push(x);
                b.push(y);
                c.push(z);
            }
        }
    }
    let [ra, rb, rc] = random;
    a.extend(ra);
    b.extend(rb);
    c.extend(rc);
    [a, b, c]
}

pub fn fused_integer_builtins_wrap_their_sums_like_plain_rust(gpu: &Gpu, scale: Scale) {
    let mut rng = rng();
    let n = scale.pick(1_000_003, 4_099);
    let random: [Vec<i32>; 3] = [random_vec(&mut rng, n), random_vec(&mut rng, n), random_vec(&mut rng, n)];
    let [a, b, c] = triples(&I32_EDGES, random);
    // The edges make the add overflow both ways: MAX + 1 and MIN + -1.
    assert!(a.iter().zip(&b).any(|(&x, &y)| x.checked_add(y).is_none() && y > 0));
    assert!(a.iter().zip(&b).any(|(&x, &y)| x.checked_add(y).is_none() && y < 0));
    let (da, db, dc) = (gpu.upload(&a).unwrap(), gpu.upload(&b).unwrap(), gpu.upload(&c).unwrap());
    let mut out = gpu.zeros::<i32>(a.len() * I32_RESULTS).unwrap();
    fused_i32::launch(gpu, &da, &db, &dc, &mut out).unwrap();
    let got = gpu.download(&out).unwrap();
    for (i, results) in got.chunks(I32_RESULTS).enumerate() {
        let want = fused_i32_reference(a[i], b[i], c[i]);
        assert_eq!(results, want, "i32 ({}, {}, {}), in fused_i32's order", a[i], b[i], c[i]);
    }

    let random: [Vec<u32>; 3] = [random_vec(&mut rng, n), random_vec(&mut rng, n), random_vec(&mut rng, n)];
    let [a, b, c] = triples(&U32_EDGES, random);
    let (da, db, dc) = (gpu.upload(&a).unwrap(), gpu.upload(&b).unwrap(), gpu.upload(&c).unwrap());
    let mut out = gpu.zeros::<u32>(a.len() * U32_RESULTS).unwrap();
    fused_u32::launch(gpu, &da, &db, &dc, &mut out).unwrap();
    let got = gpu.download(&out).unwrap();
    for (i, results) in got.chunks(U32_RESULTS).enumerate() {
        let want = fused_u32_reference(a[i], b[i], c[i]);
        assert_eq!(results, want, "u32 ({}, {}, {}), in fused_u32's order", a[i], b[i], c[i]);
    }
}
