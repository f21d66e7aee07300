//! The minimum of blocks per SM a kernel's `__launch_bounds__` asks for (`GSYNC_LAUNCH_BOUNDS`),
//! chosen so that the fused kernel does not spill registers where it need not.
//!
//! A fused kernel carries its values across every phase, and ptxas, left to choose, takes a
//! GPU's full occupancy over spilling nothing: `cg_strips` at 256 threads kept 32 registers
//! (8 blocks per SM) and spilled its iteration's values, where each segment of its split form,
//! compiled alone, did not spill. So a one-GPU build that spills is compiled again with the
//! blocks per SM it keeps as the minimum: with the occupancy stated, ptxas often keeps every
//! value in registers (`cg_strips` at 256 threads: 32 registers, no spill). Where it still
//! spills, the first build stays: a GPU alone never gives up occupancy here, which every grid
//! its tuner and its benchmarks chose assumes. A PE of a team is compiled for the blocks its
//! one-GPU build keeps, so that the spanning barrier's code costs it no occupancy, unless that
//! makes it spill more than the one-GPU build: then for fewer, the most that do not (on two
//! H200s, `cg_strips` at 40 registers and 6 blocks per SM ran faster than at 32 registers, 8
//! blocks per SM and spills). Each launch's co-residency is the driver's answer for the build
//! loaded, so it stays exact. A kernel that names its own blocks per SM
//! (`#[grid_phases(blocks_per_sm = N)]`) has them in its first build already.

use crate::barrier::Barrier;
use crate::core::error::Result;
use crate::core::kernel::KernelSpec;
use crate::cuda::compile::Usage;

/// One build of a kernel: the launch bounds' minimum of blocks per SM it was compiled with, if
/// any, its CUBIN and what ptxas reported of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fitted {
    /// `__launch_bounds__`'s second argument, or `None` for the block size alone.
    pub blocks_per_sm: Option<u32>,
    /// The CUBIN.
    pub cubin: Vec<u8>,
    /// Its registers and spills.
    pub usage: Usage,
}

/// Compiles a translation unit: its CUBIN and what ptxas reported of it.
pub type Compile<'a> = dyn FnMut(&str) -> Result<(Vec<u8>, Usage)> + 'a;

/// The builds of `kernel` under `barrier` with `threads` per block that a GPU loads: for the
/// GPU alone, and with `team` for a PE of a team as well. `compile` compiles a translation
/// unit (for a PE of a team or not, with a minimum of blocks per SM or not); `occupancy` is the
/// blocks per SM a one-GPU build keeps, 1 at least for the team's build.
pub fn fit_builds(
    kernel: &KernelSpec,
    barrier: Barrier,
    threads: u32,
    team: bool,
    compile: &mut Compile<'_>,
    occupancy: &mut dyn FnMut(&Fitted) -> Result<u32>,
) -> Result<(Fitted, Option<Fitted>)> {
    let mut build = |spans: bool, blocks_per_sm: Option<u32>| -> Result<Fitted> {
        let (cubin, usage) = compile(&kernel.bounded_source(barrier, threads, spans, blocks_per_sm))?;
        Ok(Fitted { blocks_per_sm, cubin, usage })
    };
    // A kernel that names its blocks per SM is built with them: its occupancy is its own choice.
    let own = kernel.blocks_per_sm_for(threads);
    let first = build(false, own)?;
    let alone = match (first.usage.spill_bytes, own) {
        (0, _) | (_, Some(_)) => first,
        _ => {
            let kept = occupancy(&first)?;
            first_within(std::iter::once(kept), 0, &mut |blocks| build(false, Some(blocks)))?.unwrap_or(first)
        }
    };
    if !team {
        return Ok((alone, None));
    }
    let blocks = occupancy(&alone)?.max(1);
    let spilled = alone.usage.spill_bytes;
    let same = build(true, Some(blocks))?;
    let spanning = match same.usage.spill_bytes <= spilled {
        true => same,
        false => first_within((1..blocks).rev(), spilled, &mut |blocks| build(true, Some(blocks)))?.unwrap_or(same),
    };
    Ok((alone, Some(spanning)))
}

/// The first build, of minima `blocks` in order, that spills at most `spill_bytes`.
fn first_within(
    blocks: impl Iterator<Item = u32>,
    spill_bytes: u64,
    build: &mut dyn FnMut(u32) -> Result<Fitted>,
) -> Result<Option<Fitted>> {
    for blocks in blocks {
        let fitted = build(blocks)?;
        if fitted.usage.spill_bytes <= spill_bytes {
            return Ok(Some(fitted));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::kernel::tests::SMOOTH;

    /// The builds `fit_builds` returns and the ones it compiled: for a team's PE or not, with
    /// which minimum.
    type Outcome = (Fitted, Option<Fitted>, Vec<(bool, Option<u32>)>);

    /// A compiler whose spills the test sets by the launch bounds' minimum (`None`: 0), and the
    /// occupancy it reports for `blocks_per_sm`: that minimum, or 8 for the free build.
    fn fit(team: bool, spills: impl Fn(bool, u32) -> u64) -> Outcome {
        fit_kernel(&SMOOTH, team, spills)
    }

    /// [`fit`] of `kernel`.
    fn fit_kernel(kernel: &KernelSpec, team: bool, spills: impl Fn(bool, u32) -> u64) -> Outcome {
        let mut compiled = Vec::new();
        let mut compile = |source: &str| {
            let spans = source.contains("spans every PE");
            let bounds =
                source.lines().find_map(|line| line.strip_prefix("#define GSYNC_LAUNCH_BOUNDS GSYNC_BLOCK_SIZE"));
            let blocks = bounds.and_then(|rest| rest.strip_prefix(", ")).map(|n| n.parse::<u32>().expect("a number"));
            compiled.push((spans, blocks));
            Ok((Vec::new(), Usage { registers: 32, spill_bytes: spills(spans, blocks.unwrap_or(0)) }))
        };
        let mut occupancy = |fitted: &Fitted| Ok(fitted.blocks_per_sm.unwrap_or(8));
        let (alone, spanning) =
            fit_builds(kernel, Barrier::Lbs, 256, team, &mut compile, &mut occupancy).expect("fits");
        (alone, spanning, compiled)
    }

    #[test]
    fn a_kernel_that_names_its_blocks_per_sm_keeps_them_though_it_spills() {
        let resident = KernelSpec { blocks_per_sm: 4, ..SMOOTH };
        let (alone, _, compiled) = fit_kernel(&resident, false, |_, _| 32);
        assert_eq!(compiled, [(false, Some(4))], "compiled once, with its own minimum");
        assert_eq!((alone.blocks_per_sm, alone.usage.spill_bytes), (Some(4), 32));
    }

    #[test]
    fn a_build_that_does_not_spill_is_compiled_once_as_before() {
        let (alone, spanning, compiled) = fit(true, |_, _| 0);
        assert_eq!((alone.blocks_per_sm, spanning.map(|s| s.blocks_per_sm)), (None, Some(Some(8))));
        assert_eq!(compiled, [(false, None), (true, Some(8))]);
    }

    #[test]
    fn a_spilling_build_stated_at_its_own_occupancy_keeps_it_without_spills() {
        // Free: spills at its 8 blocks per SM; with 8 stated, it does not.
        let (alone, _, compiled) = fit(false, |_, blocks| u64::from(blocks == 0) * 16);
        assert_eq!((alone.blocks_per_sm, alone.usage.spill_bytes), (Some(8), 0));
        assert_eq!(compiled, [(false, None), (false, Some(8))]);
    }

    #[test]
    fn a_one_gpu_build_gives_up_no_occupancy_to_spill_less() {
        // Spills at 8 blocks per SM, stated or not, and not at 6: the first build stays.
        let (alone, _, compiled) = fit(false, |_, blocks| u64::from(blocks == 0 || blocks > 6) * 16);
        assert_eq!((alone.blocks_per_sm, alone.usage.spill_bytes), (None, 16));
        assert_eq!(compiled, [(false, None), (false, Some(8))]);
    }

    #[test]
    fn a_team_build_that_spills_more_than_one_gpu_takes_fewer_blocks_per_sm() {
        // One GPU: no spills at 8 blocks (the free build's). The team's: spills above 6.
        let (alone, spanning, compiled) = fit(true, |spans, blocks| u64::from(spans && blocks > 6) * 24);
        let spanning = spanning.expect("a team build");
        assert_eq!((alone.blocks_per_sm, spanning.blocks_per_sm, spanning.usage.spill_bytes), (None, Some(6), 0));
        assert_eq!(compiled, [(false, None), (true, Some(8)), (true, Some(7)), (true, Some(6))]);
    }
}
