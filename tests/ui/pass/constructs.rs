use gsync::prelude::*;

/// Most of the language in one kernel.
#[grid_phases(threads = 128)]
pub fn constructs(
    data: &mut [i32],
    weights: &[f64],
    counts: &mut [u64],
    small: &mut [u8],
    flag: bool,
    limit: usize,
    mut steps: u16,
) {
    const TILE: usize = 128;
    const SCALE: f32 = 0.5;
    let mut tile = shared_array::<i32, TILE>();
    let mut regs = [0i32; 4];
    let pair = [1u8, 2];
    let t = thread_idx() as usize;
    tile[t] = data[t % data.len()];
    sync_block();
    for k in 0..4usize {
        regs[k] = tile[(t + k) % TILE].wrapping_mul(3) >> 1;
    }
    let best = if flag { regs[0].max(regs[1]) } else { regs[2].min(regs[3]) };
    let label = if best > 0 {
        let doubled = best.wrapping_add(best);
        doubled.abs()
    } else {
        0
    };
    for i in grid_stride(0..limit.min(data.len())) {
        data[i] = data[i] ^ label;
        counts.atomic_add(i % counts.len(), 1);
        small[i % small.len()] = small[i % small.len()].wrapping_add(pair[i % 2]);
    }
    let mut w = 0.0;
    for j in (0..weights.len()).step_by(2) {
        w += weights[j].sqrt().max(0.0) * SCALE as f64;
    }
    let mut spins = 0u32;
    while steps > 0 {
        steps -= 1;
        spins += 1;
        if spins > 1000 {
            break;
        }
        grid_sync();
    }
    for j in (1..4u32).rev() {
        if j == 2 {
            continue;
        }
        let lane = shfl_xor(w as f32, j);
        data[0] = lane as i32 + u8::MAX as i32;
    }
    let mut guard = 0u32;
    loop {
        guard += 1;
        if guard >= 3 {
            break;
        }
    }
    let bits = (w as f32).to_bits().count_ones() + std::f32::consts::PI.to_bits() % 7;
    counts[0] = bits as u64 + (block_dim() * grid_dim()) as u64 + grid_size() as u64 + block_idx() as u64 + global_id() as u64;
}

fn main() {
    let source = constructs::cuda_source();
    assert!(source.contains("__shared__ __align__(16) i32 tile_[128];"));
    assert!(source.contains("#define GSYNC_BLOCK_SIZE 128"));
}
