//! Half precision kernels (`f16`, `bf16`) and their checks against the `half` crate on the CPU,
//! bit for bit: arithmetic, conversions, methods and comparisons on random bit patterns and
//! edge cases, a stencil that stores `f16` and accumulates in `f32`, and a `bf16` dot product
//! through shared memory, shuffles and atomics.

use gsync::prelude::*;
use rand::Rng;

use super::checks::{rng, Scale};

/// Every operation the language offers on `f16`, once per element pair: `ops` gets 16
/// results per pair, `wide` 4, `flags` one word of comparison and classification bits.
#[grid_phases]
pub fn f16_ops(a: &[f16], b: &[f16], x: &[f32], ops: &mut [f16], wide: &mut [f32], flags: &mut [u32]) {
    for i in grid_stride(0..a.len()) {
        let p = a[i];
        let q = b[i];
        let o = 16 * i;
        ops[o] = p + q;
        ops[o + 1] = p - q;
        ops[o + 2] = p * q;
        ops[o + 3] = p / q;
        ops[o + 4] = p % q;
        ops[o + 5] = p.sqrt();
        ops[o + 6] = -p;
        ops[o + 7] = p.min(q);
        ops[o + 8] = f16::max(p, q);
        ops[o + 9] = f16::from_f32(x[i]);
        ops[o + 10] = p.abs();
        ops[o + 11] = p.copysign(q);
        ops[o + 12] = p.signum();
        ops[o + 13] = p.clamp(f16::NEG_ONE, q);
        ops[o + 14] = f16::from_bits(q.to_bits() ^ 0x0001);
        let mut acc = p;
        acc += q;
        acc *= f16::from_f32_const(0.5);
        ops[o + 15] = acc.floor() + p.round() - q.ceil() + p.trunc();
        wide[4 * i] = p.to_f32();
        wide[4 * i + 1] = p.to_f64() as f32;
        wide[4 * i + 2] = (p * q).to_f32() * 2.0;
        wide[4 * i + 3] = (p.to_f64() + q.to_f64()) as f32;
        let mut f = 0u32;
        if p < q {
            f |= 1;
        }
        if p <= q {
            f |= 2;
        }
        if p > q {
            f |= 4;
        }
        if p >= q {
            f |= 8;
        }
        if p == q {
            f |= 16;
        }
        if p != q {
            f |= 32;
        }
        if p.is_nan() {
            f |= 64;
        }
        if p.is_infinite() {
            f |= 128;
        }
        if p.is_finite() {
            f |= 256;
        }
        if p.is_sign_negative() {
            f |= 512;
        }
        flags[i] = f | ((p.to_f32() as i32 as u32) << 16);
    }
}

/// [`f16_ops`] for `bf16`.
#[grid_phases]
pub fn bf16_ops(a: &[bf16], b: &[bf16], x: &[f32], ops: &mut [bf16], wide: &mut [f32], flags: &mut [u32]) {
    for i in grid_stride(0..a.len()) {
        let p = a[i];
        let q = b[i];
        let o = 16 * i;
        ops[o] = p + q;
        ops[o + 1] = p - q;
        ops[o + 2] = p * q;
        ops[o + 3] = p / q;
        ops[o + 4] = p % q;
        ops[o + 5] = p.sqrt();
        ops[o + 6] = -p;
        ops[o + 7] = p.min(q);
        ops[o + 8] = bf16::max(p, q);
        ops[o + 9] = bf16::from_f32(x[i]);
        ops[o + 10] = p.abs();
        ops[o + 11] = p.copysign(q);
        ops[o + 12] = p.signum();
        ops[o + 13] = p.clamp(bf16::NEG_ONE, q);
        ops[o + 14] = bf16::from_bits(q.to_bits() ^ 0x0001);
        let mut acc = p;
        acc += q;
        const HALF: bf16 = bf16::from_f32_const(0.5);
        acc *= HALF;
        ops[o + 15] = acc.floor() + p.round() - q.ceil() + p.trunc();
        wide[4 * i] = p.to_f32();
        wide[4 * i + 1] = p.to_f64() as f32;
        wide[4 * i + 2] = (p * q).to_f32() * 2.0;
        wide[4 * i + 3] = (p.to_f64() + q.to_f64()) as f32;
        let mut f = 0u32;
        if p < q {
            f |= 1;
        }
        if p <= q {
            f |= 2;
        }
        if p > q {
            f |= 4;
        }
        if p >= q {
            f |= 8;
        }
        if p == q {
            f |= 16;
        }
        if p != q {
            f |= 32;
        }
        if p.is_nan() {
            f |= 64;
        }
        if p.is_infinite() {
            f |= 128;
        }
        if p.is_finite() {
            f |= 256;
        }
        if p.is_sign_negative() {
            f |= 512;
        }
        flags[i] = f | ((p.to_f32() as i32 as u32) << 16);
    }
}

/// The results [`f16_ops`] and [`bf16_ops`] compute, on the CPU with the `half` crate.
trait HalfRef: Copy + PartialOrd + std::ops::Add<Output = Self> + std::ops::Sub<Output = Self> {
    fn wide(self) -> f32;
    fn wide64(self) -> f64;
    fn bits(self) -> u16;
    fn of_bits(b: u16) -> Self;
    fn ops(p: Self, q: Self, x: f32) -> [Self; 16];
}

macro_rules! half_ref {
    ($t:ty) => {
        impl HalfRef for $t {
            fn wide(self) -> f32 {
                self.to_f32()
            }
            fn wide64(self) -> f64 {
                self.to_f64()
            }
            fn bits(self) -> u16 {
                self.to_bits()
            }
            fn of_bits(b: u16) -> Self {
                <$t>::from_bits(b)
            }
            fn ops(p: Self, q: Self, x: f32) -> [Self; 16] {
                let via = |v: f32| <$t>::from_f32(v);
                let clamp = |x: Self, lo: Self, hi: Self| {
                    let mut x = x;
                    if x < lo {
                        x = lo;
                    }
                    if x > hi {
                        x = hi;
                    }
                    x
                };
                let acc = (p + q) * <$t>::from_f32(0.5);
                [
                    p + q,
                    p - q,
                    p * q,
                    p / q,
                    p % q,
                    via(p.to_f32().sqrt()),
                    -p,
                    p.min(q),
                    p.max(q),
                    <$t>::from_f32(x),
                    via(p.to_f32().abs()),
                    p.copysign(q),
                    p.signum(),
                    clamp(p, <$t>::NEG_ONE, q),
                    <$t>::from_bits(q.to_bits() ^ 1),
                    via(acc.to_f32().floor()) + via(p.to_f32().round()) - via(q.to_f32().ceil())
                        + via(p.to_f32().trunc()),
                ]
            }
        }
    };
}
half_ref!(f16);
half_ref!(bf16);

fn flags_of<H: HalfRef>(p: H, q: H) -> u32 {
    let w = p.wide();
    let bits = [
        p < q,
        p <= q,
        p > q,
        p >= q,
        p == q,
        p != q,
        w.is_nan(),
        w.is_infinite(),
        w.is_finite(),
        p.bits() & 0x8000 != 0,
    ];
    let f = bits.iter().enumerate().fold(0u32, |f, (i, &b)| f | (u32::from(b) << i));
    f | ((w as i32 as u32) << 16)
}

/// Bit patterns worth testing in a type whose exponent mask is `exp`: zeros, the smallest
/// and largest subnormals and normals, infinities, NaNs with payloads, and ±1.
fn edge_bits(exp: u16, one: u16) -> Vec<u16> {
    let mantissa = !exp & 0x7fff;
    let mut v =
        vec![0, 1, mantissa, mantissa + 1, exp - 1, exp, exp + 1, exp | mantissa, exp | ((mantissa >> 1) + 1), one];
    v.extend(v.clone().iter().map(|b| b | 0x8000));
    v
}

/// `f32` inputs for the conversions: ties between two half precision values (which round
/// to even), the values just beside them, overflow, subnormals, NaN payloads.
fn conversion_inputs<H: HalfRef>(rng: &mut rand::rngs::StdRng, n: usize) -> Vec<f32> {
    let mut x = vec![65504.0, 65519.99, 65520.0, 1e10, -1e10, f32::MIN_POSITIVE, 5.96e-8, 2.98e-8, 2.99e-8, -0.0];
    for k in x.len()..n {
        let h = H::of_bits(rng.gen());
        let next = H::of_bits(h.bits().wrapping_add(1));
        let (lo, hi) = (h.wide(), next.wide());
        let tie = ((lo as f64 + hi as f64) / 2.0) as f32;
        x.push(match k % 6 {
            0 => tie,
            1 => f32::from_bits(tie.to_bits().wrapping_add(1)),
            2 => f32::from_bits(tie.to_bits().wrapping_sub(1)),
            3 => f32::from_bits(rng.gen()),
            4 => f32::from_bits(0x7f80_0000 | rng.gen_range(1..0x80_0000) | (rng.gen::<u32>() & 0x8000_0000)),
            _ => lo,
        });
    }
    x.truncate(n);
    x
}

/// Equal bit for bit, or both NaN (the payload of a NaN that arithmetic produces is the
/// hardware's, on the CPU and the GPU alike).
fn same<H: HalfRef>(got: H, want: H) -> bool {
    got.bits() == want.bits() || (got.wide().is_nan() && want.wide().is_nan())
}

fn same_f32(got: f32, want: f32) -> bool {
    got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan())
}

/// Random pairs of bit patterns and every pair of edge cases.
fn operand_pairs<H: HalfRef>(rng: &mut rand::rngs::StdRng, n: usize, exp: u16, one: u16) -> (Vec<H>, Vec<H>) {
    let edges = edge_bits(exp, one);
    let mut a = Vec::new();
    let mut b = Vec::new();
    for &p in &edges {
        for &q in &edges {
            a.push(H::of_bits(p));
            b.push(H::of_bits(q));
        }
    }
    while a.len() < n {
        // Mostly ordinary values (two exponents apart at most), where rounding matters.
        let p: u16 = rng.gen();
        let q = if rng.gen_bool(0.5) { p ^ (rng.gen::<u16>() & 0x87ff) } else { rng.gen() };
        a.push(H::of_bits(p));
        b.push(H::of_bits(q));
    }
    (a, b)
}

fn check_ops<H: HalfRef>(name: &str, a: &[H], b: &[H], x: &[f32], ops: &[H], wide: &[f32], flags: &[u32]) {
    let mut failures = Vec::new();
    for i in 0..a.len() {
        let (p, q) = (a[i], b[i]);
        let want = H::ops(p, q, x[i]);
        for (k, &w) in want.iter().enumerate() {
            let got = ops[16 * i + k];
            if !same(got, w) {
                failures.push(format!(
                    "op {k} of {:#06x}, {:#06x} (x = {:e}): got {:#06x}, want {:#06x}",
                    p.bits(),
                    q.bits(),
                    x[i],
                    got.bits(),
                    w.bits()
                ));
            }
        }
        let want_wide =
            [p.wide(), p.wide64() as f32, (H::ops(p, q, 0.0)[2]).wide() * 2.0, (p.wide64() + q.wide64()) as f32];
        for (k, &w) in want_wide.iter().enumerate() {
            let got = wide[4 * i + k];
            // NaN widening keeps the payload exactly: compare bits there too.
            let exact = k < 2 && got.to_bits() == w.to_bits();
            if !(exact || (k >= 2 && same_f32(got, w))) {
                failures.push(format!(
                    "wide {k} of {:#06x}, {:#06x}: got {got:e} ({:#010x}), want {w:e} ({:#010x})",
                    p.bits(),
                    q.bits(),
                    got.to_bits(),
                    w.to_bits()
                ));
            }
        }
        if flags[i] != flags_of(p, q) {
            failures.push(format!(
                "flags of {:#06x}, {:#06x}: got {:#x}, want {:#x}",
                p.bits(),
                q.bits(),
                flags[i],
                flags_of(p, q)
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{name}: {} mismatches, first: {}",
        failures.len(),
        failures[..failures.len().min(20)].join("\n")
    );
}

pub fn f16_and_bf16_match_the_half_crate_bit_for_bit(gpu: &Gpu, scale: Scale) {
    let mut rng = rng();
    let n = scale.pick(1 << 20, 6_000);
    for barrier in [Barrier::Auto, Barrier::MultiLaunch] {
        let launch = Launch::new().barrier(barrier);
        let (a, b) = operand_pairs::<f16>(&mut rng, n, 0x7c00, 0x3c00);
        let x = conversion_inputs::<f16>(&mut rng, a.len());
        let (da, db, dx) = (gpu.upload(&a).unwrap(), gpu.upload(&b).unwrap(), gpu.upload(&x).unwrap());
        let mut ops = gpu.zeros::<f16>(16 * a.len()).unwrap();
        let mut wide = gpu.zeros::<f32>(4 * a.len()).unwrap();
        let mut flags = gpu.zeros::<u32>(a.len()).unwrap();
        f16_ops::launch_with(gpu, &launch, &da, &db, &dx, &mut ops, &mut wide, &mut flags).unwrap();
        let (ops, wide, flags) =
            (gpu.download(&ops).unwrap(), gpu.download(&wide).unwrap(), gpu.download(&flags).unwrap());
        check_ops("f16", &a, &b, &x, &ops, &wide, &flags);

        let (a, b) = operand_pairs::<bf16>(&mut rng, n, 0x7f80, 0x3f80);
        let x = conversion_inputs::<bf16>(&mut rng, a.len());
        let (da, db, dx) = (gpu.upload(&a).unwrap(), gpu.upload(&b).unwrap(), gpu.upload(&x).unwrap());
        let mut ops = gpu.zeros::<bf16>(16 * a.len()).unwrap();
        let mut wide = gpu.zeros::<f32>(4 * a.len()).unwrap();
        let mut flags = gpu.zeros::<u32>(a.len()).unwrap();
        bf16_ops::launch_with(gpu, &launch, &da, &db, &dx, &mut ops, &mut wide, &mut flags).unwrap();
        let (ops, wide, flags) =
            (gpu.download(&ops).unwrap(), gpu.download(&wide).unwrap(), gpu.download(&flags).unwrap());
        check_ops("bf16", &a, &b, &x, &ops, &wide, &flags);
    }
}

/// `rounds` steps of a 3-point average over `f16` values, accumulated in `f32`, stored back
/// as `f16` and scaled by `scale` (a half precision kernel parameter), ping-ponging between
/// `a` and `b` with a grid barrier per step.
#[grid_phases]
pub fn f16_stencil(a: &mut [f16], b: &mut [f16], scale: f16, rounds: u32) {
    let n = a.len();
    const THIRD: f32 = 1.0 / 3.0;
    for r in 0..rounds {
        for i in grid_stride(1..n - 1) {
            if r % 2 == 0 {
                let sum = a[i - 1].to_f32() + a[i].to_f32() + a[i + 1].to_f32();
                b[i] = f16::from_f32(sum * THIRD) * scale;
            } else {
                let sum = b[i - 1].to_f32() + b[i].to_f32() + b[i + 1].to_f32();
                a[i] = f16::from_f32(sum * THIRD) * scale;
            }
        }
        grid_sync();
    }
}

/// [`f16_stencil`] on the CPU: the array that holds the result after `rounds`.
pub fn f16_stencil_reference(input: &[f16], scale: f16, rounds: u32) -> Vec<f16> {
    let (mut a, mut b) = (input.to_vec(), input.to_vec());
    let n = a.len();
    for r in 0..rounds {
        let (from, to) = if r % 2 == 0 { (&a, &mut b) } else { (&b, &mut a) };
        for i in 1..n.saturating_sub(1) {
            let sum = from[i - 1].to_f32() + from[i].to_f32() + from[i + 1].to_f32();
            to[i] = f16::from_f32(sum * (1.0f32 / 3.0)) * scale;
        }
    }
    if rounds % 2 == 1 {
        b
    } else {
        a
    }
}

pub fn an_f16_stencil_with_f32_accumulation_matches_the_cpu(gpu: &Gpu, scale: Scale) {
    let mut rng = rng();
    let n = scale.pick(300_007, 3_001);
    let input: Vec<f16> = (0..n).map(|_| f16::from_f32(rng.gen_range(-100.0..100.0))).collect();
    for barrier in [Barrier::Auto, Barrier::MultiLaunch] {
        for rounds in [1u32, 6] {
            let (mut a, mut b) = (gpu.upload(&input).unwrap(), gpu.upload(&input).unwrap());
            let scale = f16::from_f32(0.9);
            f16_stencil::launch_with(gpu, &Launch::new().barrier(barrier), &mut a, &mut b, scale, rounds).unwrap();
            let got = gpu.download(if rounds % 2 == 1 { &b } else { &a }).unwrap();
            let want = f16_stencil_reference(&input, scale, rounds);
            let bits = |v: &[f16]| v.iter().map(|h| h.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&got), bits(&want), "{barrier}, {rounds} rounds");
        }
    }
}

/// A `bf16` dot product: each thread sums its products in `f32`, the warp adds its lanes with
/// shuffles of `bf16` partials, and warp 0 of each block adds one `bf16` per warp into the
/// block's slot; a second phase rounds every block's slot into `total[0]` with `atomic_add`
/// and publishes its negation in `total[1]` with a release store, and the largest product
/// lands in `peak` by `atomic_max`.
#[grid_phases(threads = 128)]
pub fn bf16_dot(x: &[bf16], y: &[bf16], partial: &mut [f32], total: &mut [bf16], peak: &mut [bf16]) {
    let mut warps = shared_array::<bf16, 4>();
    let mut mine = 0.0f32;
    let mut top = bf16::NEG_INFINITY;
    for i in grid_stride(0..x.len()) {
        let product = x[i] * y[i];
        mine += product.to_f32();
        top = top.max(product);
    }
    let mut lanes = bf16::from_f32(mine);
    let mut offset = 16u32;
    while offset > 0 {
        lanes = bf16::from_f32(lanes.to_f32() + shfl_xor(lanes, offset).to_f32());
        offset /= 2;
    }
    // Every lane of the warp holds the same bits by now: the group of lanes that match is
    // never empty.
    let group = match_any(lanes);
    if lane_id() == 0 && group != 0 {
        warps[warp_id() as usize] = lanes;
    }
    sync_block();
    if thread_idx() == 0 {
        partial[block_idx() as usize] = warps[0].to_f32() + warps[1].to_f32() + warps[2].to_f32() + warps[3].to_f32();
    }
    let _ = peak.atomic_max(0, top);
    grid_sync();
    if global_id() == 0 {
        for b in 0..grid_dim() {
            let _ = total.atomic_add(0, bf16::from_f32(partial[b as usize]));
        }
        let sum = total.load_acquire(0);
        total.store_release(1, -sum);
    }
}

pub fn a_bf16_dot_product_with_shuffles_and_atomics_matches_the_cpu(gpu: &Gpu, scale: Scale) {
    let mut rng = rng();
    let n = scale.pick(1 << 18, 5_000);
    let x: Vec<bf16> = (0..n).map(|_| bf16::from_f32(rng.gen_range(-4.0..4.0))).collect();
    let y: Vec<bf16> = (0..n).map(|_| bf16::from_f32(rng.gen_range(-4.0..4.0))).collect();
    let blocks = 5u32;
    let threads = 128u32;
    let launch = Launch::new().blocks(blocks).threads(threads);
    let (dx, dy) = (gpu.upload(&x).unwrap(), gpu.upload(&y).unwrap());
    let mut partial = gpu.zeros::<f32>(blocks as usize).unwrap();
    let mut total = gpu.zeros::<bf16>(2).unwrap();
    let mut peak = gpu.upload(&[bf16::NEG_INFINITY]).unwrap();
    bf16_dot::launch_with(gpu, &launch, &dx, &dy, &mut partial, &mut total, &mut peak).unwrap();

    // The CPU reference follows the same grouping: thread t of the grid takes elements
    // t, t + grid, …; warps pair lanes by xor; blocks sum their four warps; the total adds the
    // blocks in order (one thread does it).
    let grid = (blocks * threads) as usize;
    let products: Vec<bf16> = x.iter().zip(&y).map(|(a, b)| *a * *b).collect();
    let mut thread_sums: Vec<bf16> = (0..grid)
        .map(|t| bf16::from_f32(products.iter().skip(t).step_by(grid).fold(0.0f32, |s, p| s + p.to_f32())))
        .collect();
    let mut offset = 16;
    while offset > 0 {
        let before = thread_sums.clone();
        for (t, v) in thread_sums.iter_mut().enumerate() {
            *v = bf16::from_f32(before[t].to_f32() + before[t ^ offset].to_f32());
        }
        offset /= 2;
    }
    let want_partial: Vec<f32> = (0..blocks as usize)
        .map(|b| {
            let w = |k: usize| thread_sums[b * 128 + k * 32].to_f32();
            w(0) + w(1) + w(2) + w(3)
        })
        .collect();
    let got_partial = gpu.download(&partial).unwrap();
    assert_eq!(got_partial, want_partial);
    let want_total = want_partial.iter().fold(bf16::ZERO, |s, p| s + bf16::from_f32(*p));
    let got_total = gpu.download(&total).unwrap();
    assert_eq!(got_total[0].to_bits(), want_total.to_bits());
    assert_eq!(got_total[1].to_bits(), (-want_total).to_bits());
    let want_peak = products.iter().fold(bf16::NEG_INFINITY, |m, p| m.max(*p));
    assert_eq!(gpu.download(&peak).unwrap()[0].to_bits(), want_peak.to_bits());
}

/// The claim the `half` crate's arithmetic and the device's rest on: for `+ - * /` and
/// `sqrt`, computing in `f32` and rounding to half precision once more gives the correctly
/// rounded half precision result. Checked against a once-rounded reference on random pairs
/// and edge cases (host only: the kernels above then match the crate).
pub fn rounding_through_f32_is_correct_rounding() {
    let mut rng = rng();
    let (a, b) = operand_pairs::<f16>(&mut rng, 400_000, 0x7c00, 0x3c00);
    for (&p, &q) in a.iter().zip(&b) {
        let (x, y) = (p.to_f64(), q.to_f64());
        for (k, exact) in [x + y, x - y, x * y, x / y, x.sqrt()].into_iter().enumerate() {
            let through_f32 = [p + q, p - q, p * q, p / q, f16::from_f32(p.to_f32().sqrt())][k];
            let once = round_once_f16(exact);
            assert!(
                same(through_f32, once),
                "op {k} of {:#06x}, {:#06x}: {:#06x} vs {:#06x}",
                p.to_bits(),
                q.to_bits(),
                through_f32.to_bits(),
                once.to_bits()
            );
        }
    }
}

/// `v` (exact in `f64`, or rounded once to `f64`, which has more than 2 × 11 + 2 bits)
/// rounded to the nearest `f16`, ties to even, by choosing among the neighbours of a guess.
fn round_once_f16(v: f64) -> f16 {
    if v.is_nan() {
        return f16::NAN;
    }
    let sign = if v.is_sign_negative() { 0x8000u16 } else { 0 };
    let m = v.abs();
    if m >= 65520.0 {
        return f16::from_bits(sign | 0x7c00);
    }
    let guess = f16::from_f32(m as f32).to_bits();
    let mut best = guess;
    for c in [guess.saturating_sub(1), guess + 1] {
        let (dc, db) = ((f16::from_bits(c).to_f64() - m).abs(), (f16::from_bits(best).to_f64() - m).abs());
        if c <= 0x7bff && (dc < db || (dc == db && c & 1 == 0)) {
            best = c;
        }
    }
    f16::from_bits(sign | best)
}
