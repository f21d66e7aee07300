//! One verdict per claim of the paper, computed from the measurements by
//! fixed rules whose thresholds are stated here and in the report.

use std::fmt;

use gsync::Barrier;

use crate::analysis::{self, BandRow, Crossing, Dataset, GroupSweep, Jump, LfsLimit};
use crate::model::{Experiment, Workload};
use crate::paper;

/// A speedup counts as ILBS being faster only above 1 + this.
pub const SPEEDUP_TOLERANCE: f64 = 0.05;

/// A measured effect "matches" the paper's size when it is at least this fraction of it
/// (and, for jumps, at most its inverse times the paper's).
pub const MAGNITUDE_FRACTION: f64 = 0.5;

/// A step in time counts as a jump only if it is at least this large…
pub const JUMP_MIN: f64 = 0.02;

/// …and, across a multiple of the block size, at least this many times the step just before it.
pub const JUMP_OVER_NEIGHBOUR: f64 = 2.0;

/// √N groups count as optimal when within this fraction (or the run-to-run IQR, if larger) of the best count.
pub const OPTIMUM_TOLERANCE: f64 = 0.03;

/// When all group counts are within this fraction of each other, the count does not matter.
pub const FLAT: f64 = 0.05;

/// LBS "grows significantly" with blocks when its barrier cost from the first band to the last grows at least this much…
pub const GROWTH_SIGNIFICANT: f64 = 0.25;

/// …and does not grow at all when it grows less than this.
pub const GROWTH_NONE: f64 = 0.05;

/// "In most cases" means more than this fraction of the grids.
pub const MOST: f64 = 0.6;

/// What the measurements say about a claim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The measurements show what the paper reports.
    Confirmed,
    /// The measurements show the opposite, or no effect.
    Refuted,
    /// The effect is there but differs in size or scope; the evidence says how.
    Different,
    /// The runs needed were not made (or none verified).
    Untested,
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Outcome::Confirmed => "confirmed",
            Outcome::Refuted => "refuted",
            Outcome::Different => "different",
            Outcome::Untested => "not tested",
        })
    }
}

/// The verdict on one claim.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    /// The claim, in the paper's terms.
    pub claim: String,
    /// The outcome.
    pub outcome: Outcome,
    /// The numbers behind it, and why, in plain language.
    pub evidence: String,
}

fn verdict(claim: impl Into<String>, outcome: Outcome, evidence: impl Into<String>) -> Verdict {
    Verdict { claim: claim.into(), outcome, evidence: evidence.into() }
}

/// Every verdict the data supports, in the report's order.
pub fn all(data: &Dataset) -> Vec<Verdict> {
    let mut verdicts = vec![lbs_growth(data)];
    for w in Workload::APPS {
        verdicts.push(speedup(w, &analysis::band_rows(data, w)));
    }
    verdicts.push(lfs_limit(&analysis::lfs_limit(data)));
    for w in Workload::APPS {
        let jump = analysis::ulfs_jump(data, Experiment::Paper, w, paper::BLOCK_SIZE);
        let sync_jump = analysis::ulfs_jump(data, Experiment::Paper, Workload::EmptyPhases, paper::BLOCK_SIZE);
        let share =
            analysis::share(data, Experiment::Paper, w, paper::BLOCK_SIZE, paper::BLOCK_SIZE + 1, Barrier::Ulfs);
        verdicts.push(jump_at_block_size(w, jump.as_ref(), sync_jump.as_ref(), share.map(|s| s.fraction())));
    }
    for w in [Workload::EmptyPhases, Workload::SmithWaterman, Workload::Bitonic] {
        let crossings = analysis::crossings(data, w, paper::BLOCK_SIZE, Barrier::Lbs);
        verdicts.push(multiples(w, &crossings, paper::BLOCK_SIZE));
    }
    for w in [Workload::EmptyPhases, Workload::SmithWaterman, Workload::Bitonic] {
        verdicts.push(sqrt_groups(w, &analysis::group_sweeps(data, w)));
    }
    for w in Workload::APPS {
        let six = Barrier::Ilbs { groups: Some(paper::ILBS_GROUPS) };
        verdicts.push(ulfs_beats_ilbs(w, analysis::head_to_head(data, w, Barrier::Ulfs, six)));
    }
    verdicts
}

/// "In lock-based synchronization, the execution time increases significantly with the
/// number of blocks" (abstract), judged on the barrier alone (empty phases).
pub fn lbs_growth(data: &Dataset) -> Verdict {
    let claim = "LBS's barrier time grows significantly with the number of blocks (abstract)";
    let cost = |n| data.median(Experiment::Paper, Workload::EmptyPhases, paper::BLOCK_SIZE, n, Barrier::Lbs);
    let (first, last) = (&paper::TABLE_4[0], &paper::TABLE_4[5]);
    let (Some(low), Some(high)) = (analysis::band_mean(first, cost), analysis::band_mean(last, cost)) else {
        return verdict(claim, Outcome::Untested, "LBS's cost per phase was not measured in the first and last band");
    };
    let growth = high / low - 1.0;
    let evidence = format!(
        "one LBS phase boundary costs {low:.2} µs on average over {} blocks and {high:.2} µs over {} blocks ({:+.0}%)",
        first.label(),
        last.label(),
        growth * 100.0
    );
    let outcome = if growth >= GROWTH_SIGNIFICANT {
        Outcome::Confirmed
    } else if growth < GROWTH_NONE {
        Outcome::Refuted
    } else {
        Outcome::Different
    };
    let why = match outcome {
        Outcome::Confirmed => String::new(),
        Outcome::Refuted => "; at these grid sizes the single counter is not a bottleneck on this GPU".into(),
        _ => format!("; it grows, but by less than {:.0}%", GROWTH_SIGNIFICANT * 100.0),
    };
    verdict(claim, outcome, evidence + &why)
}

/// Tables 4 and 5: ILBS (6 groups) over LBS per band.
pub fn speedup(workload: Workload, rows: &[BandRow]) -> Verdict {
    let table = paper::table_number(workload).unwrap_or(0);
    let paper_range = paper_speedup_range(rows);
    let claim = format!(
        "ILBS (6 groups) is faster than LBS on {}: speedup {paper_range} per band (Table {table})",
        workload.title()
    );
    let measured: Vec<(&BandRow, f64)> = rows.iter().filter_map(|r| Some((r, r.speedup?))).collect();
    if measured.len() < rows.len() || rows.is_empty() {
        return verdict(claim, Outcome::Untested, "not every band was measured with both LBS and ILBS (6 groups)");
    }
    let ours: Vec<f64> = measured.iter().map(|m| m.1).collect();
    let low = ours.iter().copied().fold(f64::MAX, f64::min);
    let high = ours.iter().copied().fold(f64::MIN, f64::max);
    let faster: Vec<&BandRow> = measured.iter().filter(|m| m.1 >= 1.0 + SPEEDUP_TOLERANCE).map(|m| m.0).collect();
    let strong = measured
        .iter()
        .filter(|(row, s)| s - 1.0 >= MAGNITUDE_FRACTION * (row.paper.speedup - 1.0) && *s >= 1.0 + SPEEDUP_TOLERANCE)
        .count();
    let evidence = format!("measured speedups {low:.2}–{high:.2} across the six bands (paper {paper_range})");
    let (outcome, why) = if faster.len() == rows.len() && 2 * strong >= rows.len() {
        (Outcome::Confirmed, String::new())
    } else if faster.len() == rows.len() {
        (
            Outcome::Different,
            format!(
                "; ILBS is faster in every band, but by less than half the paper's gain in {} of {} bands",
                rows.len() - strong,
                rows.len()
            ),
        )
    } else if faster.is_empty() {
        let slower = ours.iter().filter(|&&s| s < 1.0 / (1.0 + SPEEDUP_TOLERANCE)).count();
        let how = if slower > 0 {
            format!("ILBS is slower than LBS in {slower} of {} bands", rows.len())
        } else {
            "ILBS and LBS take the same time within 5%".to_owned()
        };
        (Outcome::Refuted, format!("; {how}: with at most 60 blocks, the grid counter is not contended enough on this GPU for grouping to pay for ILBS's second level"))
    } else {
        let bands: Vec<String> = faster.iter().map(|r| r.paper.label()).collect();
        (Outcome::Different, format!("; ILBS is faster only in bands {}", bands.join(", ")))
    };
    verdict(claim, outcome, evidence + &why)
}

fn paper_speedup_range(rows: &[BandRow]) -> String {
    let speedups: Vec<f64> = rows.iter().map(|r| r.paper.speedup).collect();
    let low = speedups.iter().copied().fold(f64::MAX, f64::min);
    let high = speedups.iter().copied().fold(f64::MIN, f64::max);
    if speedups.is_empty() {
        "–".into()
    } else {
        format!("{low:.2}–{high:.2}")
    }
}

/// "LFS works only up to the block size; past it ULFS is needed."
pub fn lfs_limit(limit: &LfsLimit) -> Verdict {
    let claim = "LFS synchronizes at most as many blocks as a block has threads; ULFS lifts the limit";
    if limit.lfs_ok_within + limit.lfs_refused_beyond == 0 {
        return verdict(claim, Outcome::Untested, "no LFS configuration was measured");
    }
    let largest = limit.ulfs_largest.map_or("none".to_owned(), |(n, t)| format!("{n} blocks of {t} threads"));
    let evidence = format!(
        "LFS ran and verified in {} configurations with N ≤ B and was refused in {} with N > B \
         (the runtime enforces the limit: LFS's master block gathers with one thread per block); \
         ULFS ran and verified in {} configurations with N > B (largest: {largest})",
        limit.lfs_ok_within, limit.lfs_refused_beyond, limit.ulfs_ok_beyond
    );
    let outcome = if limit.lfs_failed_within > 0 || limit.lfs_ran_beyond > 0 || limit.ulfs_failed_beyond > 0 {
        Outcome::Different
    } else if limit.ulfs_ok_beyond > 0 && limit.lfs_refused_beyond > 0 {
        Outcome::Confirmed
    } else {
        Outcome::Untested
    };
    let why = if outcome == Outcome::Different {
        format!(
            "; but {} LFS runs within the limit failed, {} LFS runs beyond it ran, {} ULFS runs beyond it failed",
            limit.lfs_failed_within, limit.lfs_ran_beyond, limit.ulfs_failed_beyond
        )
    } else {
        String::new()
    };
    verdict(claim, outcome, evidence + &why)
}

/// "At 33 blocks ULFS costs 46.8% (Smith-Waterman) / 34% (bitonic) more time than LFS."
pub fn jump_at_block_size(
    workload: Workload,
    jump: Option<&Jump>,
    sync_jump: Option<&Jump>,
    sync_share: Option<f64>,
) -> Verdict {
    let expected = paper::ulfs_jump(workload).unwrap_or(0.0);
    let claim = format!(
        "{}: ULFS on 33 blocks takes {:.1}% more time than LFS on 32 (Section 4)",
        workload.title(),
        expected * 100.0
    );
    let Some(jump) = jump else {
        return verdict(claim, Outcome::Untested, "LFS on 32 and ULFS on 33 blocks were not both measured");
    };
    let mut evidence = format!(
        "ULFS(33) {:.1} µs vs LFS(32) {:.1} µs: {:+.1}% (paper {:+.1}%), ranges {}",
        jump.ulfs_at.median,
        jump.lfs_below.median,
        jump.rise * 100.0,
        expected * 100.0,
        if jump.disjoint { "disjoint" } else { "overlapping" }
    );
    if let Some(control) = jump.control_rise {
        evidence += &format!("; LBS, which has no tree, changes by {:+.1}% from 32 to 33 blocks", control * 100.0);
    }
    let in_range = jump.rise >= MAGNITUDE_FRACTION * expected && jump.rise <= expected / MAGNITUDE_FRACTION;
    let outcome = match (jump.is_significant(JUMP_MIN), in_range) {
        (true, true) => Outcome::Confirmed,
        (true, false) => Outcome::Different,
        (false, _) => Outcome::Refuted,
    };
    if outcome == Outcome::Confirmed {
        return verdict(claim, outcome, evidence);
    }
    if let Some(sync) = sync_jump {
        evidence += &format!(
            "; the barrier alone goes from {:.2} µs (LFS, 32) to {:.2} µs (ULFS, 33) per phase ({:+.0}%)",
            sync.lfs_below.median,
            sync.ulfs_at.median,
            sync.rise * 100.0
        );
    }
    if let Some(share) = sync_share {
        evidence += &format!(", and barriers are about {:.0}% of this run's time", share * 100.0);
    }
    let barrier_jumps = sync_jump.is_some_and(|s| s.is_significant(JUMP_MIN));
    evidence += match outcome {
        Outcome::Refuted if jump.control_rise.is_some() => "; no jump beyond what one more block costs anyway",
        Outcome::Refuted => "; no significant jump",
        _ if jump.rise > expected => "; the jump is larger than the paper's",
        _ if barrier_jumps => {
            "; the barrier's own jump is real but diluted, because barriers are only part of the time"
        }
        _ => "; the barrier itself hardly jumps on this GPU",
    };
    verdict(claim, outcome, evidence)
}

/// "ULFS time jumps whenever the block count passes a multiple of the block size."
pub fn multiples(workload: Workload, crossings: &[Crossing], block_size: u32) -> Verdict {
    let claim = format!(
        "{}: ULFS's time jumps whenever the block count passes a multiple of the block size (Section 4)",
        workload.title()
    );
    if crossings.is_empty() {
        return verdict(claim, Outcome::Untested, "no multiple of the block size was measured on both sides");
    }
    let jumps: Vec<&Crossing> = crossings.iter().filter(|c| is_jump(c)).collect();
    let listed: Vec<String> = crossings
        .iter()
        .map(|c| {
            format!(
                "{}→{}: {:+.1}%{}",
                c.multiple,
                c.multiple + 1,
                c.step * 100.0,
                if is_jump(c) { " (jump)" } else { "" }
            )
        })
        .collect();
    let evidence = format!("steps across the multiples: {}", listed.join(", "));
    let outcome = if jumps.is_empty() {
        Outcome::Refuted
    } else if 3 * jumps.len() >= 2 * crossings.len() {
        Outcome::Confirmed
    } else {
        Outcome::Different
    };
    let tree_grows =
        |c: &Crossing| Barrier::ulfs_levels(c.multiple + 1, block_size) > Barrier::ulfs_levels(c.multiple, block_size);
    let follows_levels = crossings.iter().all(|c| is_jump(c) == tree_grows(c));
    let at: Vec<String> = jumps.iter().map(|c| (c.multiple + 1).to_string()).collect();
    let why = match outcome {
        Outcome::Different if follows_levels => format!(
            "; jumps exactly where ULFS's tree gains a level (N = {} blocks), and not at the other multiples",
            at.join(", ")
        ),
        Outcome::Different => format!("; a jump only at {} blocks", at.join(", ")),
        Outcome::Refuted => "; no step stands out from its neighbours".to_owned(),
        _ => String::new(),
    };
    verdict(claim, outcome, evidence + &why)
}

/// Whether ULFS's step across a multiple counts as a jump: large enough, every run
/// slower, larger than the step just before it, and larger than LBS's step across the same multiple.
pub fn is_jump(c: &Crossing) -> bool {
    let stands_out = c.step_before.is_none_or(|before| c.step > JUMP_OVER_NEIGHBOUR * before.abs());
    let beyond_control = c.control_step.is_none_or(|control| c.step - control >= JUMP_MIN);
    c.step >= JUMP_MIN && c.disjoint && stands_out && beyond_control
}

/// How one grid's group sweep judges the √N rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RootFit {
    /// √N is within tolerance of the best count.
    Optimal,
    /// The group count hardly matters.
    Flat,
    /// Another count is clearly better.
    Beaten,
    /// √N itself was not measured.
    Missing,
}

/// Judges one sweep.
pub fn root_fit(sweep: &GroupSweep) -> RootFit {
    let (Some(excess), Some(root)) = (sweep.root_excess(), sweep.root_summary) else {
        return RootFit::Missing;
    };
    if sweep.range < FLAT {
        RootFit::Flat
    } else if excess <= OPTIMUM_TOLERANCE.max(root.relative_iqr()) {
        RootFit::Optimal
    } else {
        RootFit::Beaten
    }
}

/// "The optimal number of groups for ILBS is √N."
pub fn sqrt_groups(workload: Workload, sweeps: &[GroupSweep]) -> Verdict {
    let claim = format!("{}: ILBS is fastest with √N groups (Section 3, Tables 4–5)", workload.title());
    let judged: Vec<(&GroupSweep, RootFit)> =
        sweeps.iter().map(|s| (s, root_fit(s))).filter(|(_, fit)| *fit != RootFit::Missing).collect();
    if judged.is_empty() {
        return verdict(claim, Outcome::Untested, "no group sweep with √N groups was measured");
    }
    let parts: Vec<String> = judged
        .iter()
        .map(|(s, fit)| {
            let excess = s.root_excess().unwrap_or(0.0) * 100.0;
            let fit = match fit {
                RootFit::Optimal => "√N within tolerance",
                RootFit::Flat => "all counts within 5%",
                _ => "√N beaten",
            };
            format!(
                "N={}: best {} groups ({:.2} µs), √N={} is {excess:+.1}%, counts span {:.0}% ({fit})",
                s.blocks,
                s.best,
                s.best_median,
                s.root,
                s.range * 100.0
            )
        })
        .collect();
    let count = |wanted: RootFit| judged.iter().filter(|(_, fit)| *fit == wanted).count();
    let (optimal, flat, beaten) = (count(RootFit::Optimal), count(RootFit::Flat), count(RootFit::Beaten));
    let (outcome, why) = if optimal == judged.len() {
        (Outcome::Confirmed, "")
    } else if flat == judged.len() {
        (Outcome::Different, "; the group count barely matters on this GPU, so there is no optimum to find")
    } else if beaten == judged.len() {
        (Outcome::Refuted, "; another group count is clearly faster on every grid")
    } else {
        (Outcome::Different, "; √N is optimal on some grids and not on others")
    };
    verdict(claim, outcome, parts.join("; ") + why)
}

/// "In most cases ULFS performs better than ILBS, except just past a multiple of the block size."
pub fn ulfs_beats_ilbs(workload: Workload, (wins, total, losses): (usize, usize, Vec<u32>)) -> Verdict {
    let claim = format!(
        "{}: in most cases ULFS is faster than ILBS, except just past a multiple of the block size (Figures 11–12)",
        workload.title()
    );
    if total == 0 {
        return verdict(claim, Outcome::Untested, "ULFS and ILBS (6 groups) were not both measured");
    }
    let fraction = wins as f64 / total as f64;
    let lost: Vec<String> = losses.iter().map(u32::to_string).collect();
    let evidence = format!(
        "ULFS is faster on {wins} of {total} grids ({:.0}%){}",
        fraction * 100.0,
        if lost.is_empty() { String::new() } else { format!("; ILBS is faster on {}", shorten_list(&lost)) }
    );
    let outcome = if fraction > MOST {
        Outcome::Confirmed
    } else if fraction < 1.0 - MOST {
        Outcome::Refuted
    } else {
        Outcome::Different
    };
    let why = match outcome {
        Outcome::Different => "; neither is faster in most cases",
        Outcome::Refuted => "; ILBS is faster in most cases",
        _ => "",
    };
    verdict(claim, outcome, evidence + why)
}

/// A list of grid sizes, shortened to its first 12 with a count of the rest.
fn shorten_list(items: &[String]) -> String {
    if items.len() <= 12 {
        items.join(", ")
    } else {
        format!("{} and {} more", items[..12].join(", "), items.len() - 12)
    }
}

/// The rules above, for the report.
pub fn rules() -> Vec<String> {
    vec![
        format!(
            "ILBS vs LBS (Tables 4–5): confirmed if every band's speedup is ≥ {:.2} and at least half the bands reach \
             half the paper's gain (speedup − 1 ≥ {MAGNITUDE_FRACTION} × (paper − 1)); different if ILBS is faster \
             everywhere but by less, or only in some bands; refuted if no band reaches {:.2}.",
            1.0 + SPEEDUP_TOLERANCE,
            1.0 + SPEEDUP_TOLERANCE
        ),
        format!(
            "ULFS(33) vs LFS(32): a jump counts if the medians rise by ≥ {:.0}%, every ULFS(33) run is slower than \
             every LFS(32) run, and the rise exceeds LBS's own rise from 32 to 33 blocks by ≥ the same margin; \
             confirmed if it is also between {MAGNITUDE_FRACTION}× and {}× the paper's figure, different \
             otherwise; refuted without a jump.",
            JUMP_MIN * 100.0,
            1.0 / MAGNITUDE_FRACTION
        ),
        format!(
            "ULFS at multiples of the block size: a step from k·B to k·B + 1 blocks is a jump if it is ≥ {:.0}%, \
             every run on k·B + 1 is slower than every run on k·B, it is more than {JUMP_OVER_NEIGHBOUR}× the step \
             from k·B − 1 to k·B, and it exceeds LBS's step across the same multiple by ≥ the same margin; confirmed if at least two thirds of the multiples jump, refuted if none does.",
            JUMP_MIN * 100.0
        ),
        format!(
            "√N groups: per grid, √N is optimal if its median is within {:.0}% (or its own relative IQR, if larger) \
             of the best count's; if all counts lie within {:.0}% the count does not matter (flat). Confirmed if √N \
             is optimal on every grid, refuted if beaten on every grid, different otherwise.",
            OPTIMUM_TOLERANCE * 100.0,
            FLAT * 100.0
        ),
        format!(
            "LBS growth: the mean cost of one LBS phase boundary over 52–60 blocks against 7–15 blocks: confirmed \
             at ≥ {:.0}% growth, refuted below {:.0}%, different between.",
            GROWTH_SIGNIFICANT * 100.0,
            GROWTH_NONE * 100.0
        ),
        format!(
            "ULFS vs ILBS: confirmed if ULFS's median is lower on more than {:.0}% of the grids 7–60, refuted if on \
             fewer than {:.0}%, different between.",
            MOST * 100.0,
            (1.0 - MOST) * 100.0
        ),
        "LFS limit: confirmed if LFS verified on every grid within the block size, was refused on every grid past \
         it, and ULFS verified on every grid past it."
            .to_owned(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::tests::uniform_speedup;
    use crate::stats::Summary;

    fn bands(factor: f64, w: Workload) -> Vec<BandRow> {
        analysis::band_rows(&Dataset::from_runs(&uniform_speedup(w, factor)), w)
    }

    #[test]
    fn a_speedup_like_the_papers_is_confirmed() {
        let v = speedup(Workload::SmithWaterman, &bands(1.6, Workload::SmithWaterman));
        assert_eq!(v.outcome, Outcome::Confirmed, "{}", v.evidence);
        assert!(v.evidence.contains("1.60–1.60") && v.evidence.contains("1.28–1.84"), "{}", v.evidence);
    }

    #[test]
    fn ilbs_slower_than_lbs_refutes_the_speedup() {
        let v = speedup(Workload::Bitonic, &bands(0.8, Workload::Bitonic));
        assert_eq!(v.outcome, Outcome::Refuted, "{}", v.evidence);
        assert!(v.evidence.contains("slower than LBS in 6 of 6 bands"), "{}", v.evidence);
        let tie = speedup(Workload::Bitonic, &bands(1.01, Workload::Bitonic));
        assert_eq!(tie.outcome, Outcome::Refuted);
        assert!(tie.evidence.contains("same time within 5%"), "{}", tie.evidence);
    }

    #[test]
    fn a_small_but_real_speedup_is_different() {
        let v = speedup(Workload::Bitonic, &bands(1.1, Workload::Bitonic));
        assert_eq!(v.outcome, Outcome::Different, "{}", v.evidence);
        assert!(v.evidence.contains("less than half the paper's gain"), "{}", v.evidence);
    }

    #[test]
    fn missing_bands_are_not_tested() {
        let rows = bands(2.0, Workload::Bitonic);
        let v = speedup(Workload::Bitonic, &rows[..3]);
        assert_eq!(v.outcome, Outcome::Confirmed, "half the table, all measured");
        let mut partial = rows.clone();
        partial[2].speedup = None;
        assert_eq!(speedup(Workload::Bitonic, &partial).outcome, Outcome::Untested);
    }

    fn summary(values: &[f64]) -> Summary {
        Summary::of(values).expect("values")
    }

    fn jump(low: &[f64], high: &[f64]) -> Jump {
        let (lfs, ulfs) = (summary(low), summary(high));
        Jump {
            block_size: 32,
            lfs_below: lfs,
            ulfs_below: None,
            ulfs_at: ulfs,
            rise: ulfs.median / lfs.median - 1.0,
            disjoint: lfs.entirely_below(&ulfs),
            control_rise: None,
        }
    }

    #[test]
    fn jumps_are_judged_by_size_and_by_overlap() {
        let w = Workload::SmithWaterman;
        let like_paper = jump(&[100.0, 101.0, 102.0], &[140.0, 146.0, 150.0]);
        assert_eq!(jump_at_block_size(w, Some(&like_paper), None, None).outcome, Outcome::Confirmed);
        let small = jump(&[100.0, 101.0, 102.0], &[105.0, 106.0, 107.0]);
        let sync = jump(&[1.8, 1.8, 1.9], &[2.5, 2.5, 2.6]);
        let v = jump_at_block_size(w, Some(&small), Some(&sync), Some(0.12));
        assert_eq!(v.outcome, Outcome::Different, "{}", v.evidence);
        assert!(v.evidence.contains("from 1.80 µs (LFS, 32) to 2.50 µs"), "{}", v.evidence);
        assert!(v.evidence.contains("about 12% of this run") && v.evidence.contains("diluted"), "{}", v.evidence);
        let mut explained = small.clone();
        explained.control_rise = Some(0.05);
        let v = jump_at_block_size(w, Some(&explained), None, None);
        assert_eq!(v.outcome, Outcome::Refuted, "the grid itself explains the rise: {}", v.evidence);
        let overlapping = jump(&[100.0, 101.0, 130.0], &[110.0, 111.0, 112.0]);
        assert_eq!(jump_at_block_size(w, Some(&overlapping), None, None).outcome, Outcome::Refuted);
        assert_eq!(jump_at_block_size(w, None, None, None).outcome, Outcome::Untested);
    }

    fn crossing(multiple: u32, before: f64, at: f64, after: f64) -> Crossing {
        let (b, a, x) = (summary(&[before]), summary(&[at * 0.99, at, at * 1.01]), summary(&[after * 0.99, after]));
        Crossing {
            multiple,
            before: Some(b),
            at: a,
            after: x,
            step: x.median / a.median - 1.0,
            step_before: Some(a.median / b.median - 1.0),
            disjoint: a.entirely_below(&x),
            control_step: None,
        }
    }

    #[test]
    fn a_jump_only_where_the_tree_grows_is_different_from_one_at_every_multiple() {
        let w = Workload::EmptyPhases;
        let everywhere = [crossing(32, 1.8, 1.8, 2.5), crossing(64, 2.5, 2.5, 3.0), crossing(96, 3.0, 3.0, 3.6)];
        assert_eq!(multiples(w, &everywhere, 32).outcome, Outcome::Confirmed);
        let once = [crossing(32, 1.8, 1.8, 2.5), crossing(64, 2.5, 2.5, 2.51), crossing(96, 2.5, 2.5, 2.5)];
        let v = multiples(w, &once, 32);
        assert_eq!(v.outcome, Outcome::Different, "{}", v.evidence);
        assert!(v.evidence.contains("gains a level (N = 33 blocks)"), "{}", v.evidence);
        let elsewhere = [crossing(32, 1.8, 1.8, 1.8), crossing(64, 2.5, 2.5, 3.0), crossing(96, 3.0, 3.0, 3.0)];
        let v = multiples(w, &elsewhere, 32);
        assert!(v.evidence.contains("a jump only at 65 blocks"), "{}", v.evidence);
        let never = [crossing(32, 1.8, 1.8, 1.8), crossing(64, 1.8, 1.8, 1.81)];
        assert_eq!(multiples(w, &never, 32).outcome, Outcome::Refuted);
        // A rise that merely continues the trend of the step before is not a jump…
        assert!(!is_jump(&crossing(64, 2.0, 2.5, 3.0)));
        // …and neither is one that LBS, without a tree, shows as well.
        let mut shared = crossing(32, 1.8, 1.8, 2.5);
        assert!(is_jump(&shared));
        shared.control_step = Some(0.4);
        assert!(!is_jump(&shared));
    }

    fn sweep(blocks: u32, medians: &[(u32, f64)]) -> GroupSweep {
        let points: Vec<(u32, Summary)> = medians.iter().map(|&(g, m)| (g, summary(&[m]))).collect();
        let &(best, best_summary) = points.iter().min_by(|a, b| a.1.median.total_cmp(&b.1.median)).expect("points");
        let worst = points.iter().map(|p| p.1.median).fold(f64::MIN, f64::max);
        let root = Barrier::default_ilbs_groups(blocks);
        GroupSweep {
            blocks,
            root_summary: points.iter().find(|p| p.0 == root).map(|p| p.1),
            best,
            best_median: best_summary.median,
            root,
            range: worst / best_summary.median - 1.0,
            points,
        }
    }

    #[test]
    fn the_root_rule_distinguishes_optimal_beaten_and_flat_sweeps() {
        let w = Workload::EmptyPhases;
        let valley_at_root = sweep(36, &[(1, 3.0), (3, 2.2), (6, 2.0), (12, 2.3), (36, 3.5)]);
        let valley_elsewhere = sweep(36, &[(1, 2.0), (3, 2.2), (6, 2.6), (12, 2.9), (36, 3.5)]);
        let flat = sweep(36, &[(1, 2.0), (6, 2.02), (36, 2.05)]);
        assert_eq!(root_fit(&valley_at_root), RootFit::Optimal);
        assert_eq!(root_fit(&valley_elsewhere), RootFit::Beaten);
        assert_eq!(root_fit(&flat), RootFit::Flat);
        assert_eq!(sqrt_groups(w, std::slice::from_ref(&valley_at_root)).outcome, Outcome::Confirmed);
        assert_eq!(sqrt_groups(w, std::slice::from_ref(&valley_elsewhere)).outcome, Outcome::Refuted);
        assert_eq!(sqrt_groups(w, std::slice::from_ref(&flat)).outcome, Outcome::Different);
        assert_eq!(sqrt_groups(w, &[valley_at_root, valley_elsewhere]).outcome, Outcome::Different);
        assert_eq!(sqrt_groups(w, &[]).outcome, Outcome::Untested);
        let v = sqrt_groups(w, &[flat]);
        assert!(v.evidence.contains("N=36: best 1 groups"), "{}", v.evidence);
    }

    #[test]
    fn most_cases_means_more_than_sixty_percent() {
        let w = Workload::Bitonic;
        assert_eq!(ulfs_beats_ilbs(w, (40, 54, vec![33])).outcome, Outcome::Confirmed);
        assert_eq!(ulfs_beats_ilbs(w, (27, 54, vec![])).outcome, Outcome::Different);
        assert_eq!(ulfs_beats_ilbs(w, (5, 54, vec![])).outcome, Outcome::Refuted);
        assert_eq!(ulfs_beats_ilbs(w, (0, 0, vec![])).outcome, Outcome::Untested);
        let long: Vec<u32> = (7..30).collect();
        assert!(ulfs_beats_ilbs(w, (0, 23, long)).evidence.contains("and 11 more"));
    }

    #[test]
    fn the_lfs_limit_needs_refusals_beyond_and_ulfs_running_there() {
        let mut limit = LfsLimit {
            lfs_ok_within: 26,
            lfs_refused_beyond: 28,
            ulfs_ok_beyond: 40,
            ulfs_largest: Some((4224, 32)),
            ..LfsLimit::default()
        };
        assert_eq!(lfs_limit(&limit).outcome, Outcome::Confirmed);
        limit.lfs_ran_beyond = 1;
        assert_eq!(lfs_limit(&limit).outcome, Outcome::Different);
        assert_eq!(lfs_limit(&LfsLimit::default()).outcome, Outcome::Untested);
    }

    #[test]
    fn every_rule_is_stated() {
        let rules = rules().join("\n");
        assert!(rules.contains("≥ 1.05") && rules.contains("2×") && rules.contains("within 3%"), "{rules}");
    }
}
