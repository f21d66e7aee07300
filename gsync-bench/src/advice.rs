//! Which barrier to use: for each workload and block size, how often each barrier is the
//! fastest and how much slower than the fastest it is elsewhere, and recommendations worded
//! from those numbers by fixed rules, stated here and in the report.

use gsync::Barrier;

use crate::analysis::{self, Dataset, Ranking, Standing};
use crate::model::{barrier_label, Experiment, Workload};
use crate::paper;

/// Medians within this fraction of a grid's lowest median tie for the fastest.
pub const TIE: f64 = 0.01;

/// The barriers compared: those of the paper's setting.
pub const BARRIERS: [Barrier; 7] = crate::plan::PAPER_BARRIERS;

/// The workloads, in the report's order: the two applications, then the barrier alone.
pub const WORKLOADS: [Workload; 3] = [Workload::SmithWaterman, Workload::Bitonic, Workload::EmptyPhases];

/// The settings ranked, as (experiment, threads per block): the paper's 32 threads, then
/// each block size of the extended sweep.
pub fn settings(data: &Dataset) -> Vec<(Experiment, u32)> {
    let mut settings = Vec::new();
    if data.has(Experiment::Paper) {
        settings.push((Experiment::Paper, paper::BLOCK_SIZE));
    }
    settings.extend(data.block_sizes(Experiment::Extended).into_iter().map(|t| (Experiment::Extended, t)));
    settings
}

/// Every workload's ranking of [`BARRIERS`], setting by setting.
pub fn rankings(data: &Dataset) -> Vec<Ranking> {
    let mut out = Vec::new();
    for (e, threads) in settings(data) {
        out.extend(WORKLOADS.iter().filter_map(|&w| analysis::ranking(data, e, w, threads, &BARRIERS, TIE)));
    }
    out
}

/// The barrier fastest on the most grids; a lower mean slowdown breaks a tie, then the report's order.
pub fn leader(ranking: &Ranking) -> Option<&Standing> {
    let better =
        |a: &Standing, b: &Standing| a.wins > b.wins || (a.wins == b.wins && a.mean_slowdown < b.mean_slowdown);
    ranking.standings.iter().reduce(|best, s| if better(s, best) { s } else { best })
}

/// Among the barriers other than `leader` that ran on every grid, the one with the lowest
/// mean slowdown (the closest alternative) and, if another, the one with the highest.
pub fn alternatives(ranking: &Ranking, leader: Barrier) -> (Option<&Standing>, Option<&Standing>) {
    let others = || ranking.everywhere().filter(move |s| s.barrier != leader);
    let closest = others().min_by(|a, b| a.mean_slowdown.total_cmp(&b.mean_slowdown));
    let slowest = others().max_by(|a, b| a.mean_slowdown.total_cmp(&b.mean_slowdown));
    let slowest = slowest.filter(|s| closest.is_some_and(|c| c.barrier != s.barrier));
    (closest, slowest)
}

/// A slowdown factor as the percentage by which it is slower: 1.037 → "3.7%".
pub fn slower(slowdown: f64) -> String {
    format!("{:.1}%", (slowdown - 1.0) * 100.0)
}

/// A count in words: `plural(1, "grid")` is "1 grid", `plural(3, "grid")` is "3 grids".
pub fn plural(count: usize, noun: &str) -> String {
    if count == 1 {
        format!("1 {noun}")
    } else {
        format!("{count} {noun}s")
    }
}

/// The grids of a ranking in words: "7–60 blocks" or "33 blocks".
pub fn span(ranking: &Ranking) -> String {
    match (ranking.grids.first(), ranking.grids.last()) {
        (Some(first), Some(last)) if first != last => format!("{first}–{last} blocks"),
        (Some(only), _) => format!("{only} blocks"),
        _ => "no grid".to_owned(),
    }
}

/// Where a ranking was measured: "Bitonic sort, 7–60 blocks of 32 threads".
pub fn setting(ranking: &Ranking) -> String {
    format!("{}, {} of {} threads", ranking.workload.title(), span(ranking), ranking.threads)
}

/// One workload's recommendation in one setting, in a sentence.
pub fn advice(ranking: &Ranking) -> String {
    let grids = ranking.grids.len();
    let head = format!("{}, {}, {}", ranking.workload.title(), plural(grids, "grid"), span(ranking));
    let Some(lead) = leader(ranking) else {
        return format!("{head}: no barrier was timed.");
    };
    let on = if lead.wins == grids { format!("all {grids}") } else { format!("{} of {grids}", lead.wins) };
    let mut text = format!("{head}: **{}** is the fastest on {on} grids", barrier_label(lead.barrier));
    if lead.grids < grids {
        text += &format!(" (it ran on {} of them)", lead.grids);
    }
    if lead.worst.0 > 1.0 + TIE {
        text += &format!(" and at most {} slower on the others", slower(lead.worst.0));
    }
    let (closest, slowest) = alternatives(ranking, lead.barrier);
    if let Some(c) = closest {
        let also =
            if c.wins > 0 { format!(" (also among the fastest on {})", plural(c.wins, "grid")) } else { String::new() };
        text += &format!(
            "; the closest alternative is {}{also}, {} slower on average and {} at worst",
            barrier_label(c.barrier),
            slower(c.mean_slowdown),
            slower(c.worst.0)
        );
    }
    if let Some(s) = slowest {
        text += &format!(
            "; the slowest is {}, {} slower on average and up to {} (on {} blocks)",
            barrier_label(s.barrier),
            slower(s.mean_slowdown),
            slower(s.worst.0),
            s.worst.1
        );
    }
    text + "."
}

/// A barrier's largest slowdown over several rankings, with the ranking and grid where it happened.
fn worst_over<'a>(rankings: &[&'a Ranking], barrier: Barrier) -> Option<(f64, &'a Ranking, u32)> {
    rankings
        .iter()
        .filter_map(|&r| r.standing(barrier).map(|s| (s.worst.0, r, s.worst.1)))
        .max_by(|a, b| a.0.total_cmp(&b.0))
}

/// The barriers that ran on every grid of every ranking given, each with its largest
/// slowdown over them (and where), smallest first.
pub fn worst_cases<'a>(rankings: &[&'a Ranking]) -> Vec<(Barrier, (f64, &'a Ranking, u32))> {
    let everywhere = |b: Barrier| rankings.iter().all(|r| r.everywhere().any(|s| s.barrier == b));
    let mut out: Vec<(Barrier, (f64, &Ranking, u32))> = BARRIERS
        .into_iter()
        .filter(|&b| !rankings.is_empty() && everywhere(b))
        .filter_map(|b| Some((b, worst_over(rankings, b)?)))
        .collect();
    out.sort_by(|(_, (x, ..)), (_, (y, ..))| x.total_cmp(y));
    out
}

/// The application settings, and the barrier with the smallest worst case over all of them.
fn safest_sentence(apps: &[&Ranking]) -> String {
    let grids: usize = apps.iter().map(|r| r.grids.len()).sum();
    let cases = worst_cases(apps);
    let Some((best, (worst, at, blocks))) = cases.first() else {
        return format!(
            "One barrier for every application ({}, {grids} grids): none ran on every grid.",
            plural(apps.len(), "setting")
        );
    };
    let others: Vec<String> =
        cases[1..].iter().map(|(b, (w, _, _))| format!("{} {}", barrier_label(*b), slower(*w))).collect();
    let mut text = format!(
        "One barrier for every application ({}, {grids} grids): of the barriers that ran on every grid, **{}** \
         has the smallest worst case, at most {} slower than the fastest barrier ({}, {blocks} blocks of {} \
         threads)",
        plural(apps.len(), "setting"),
        barrier_label(*best),
        slower(*worst),
        at.workload.title(),
        at.threads
    );
    if !others.is_empty() {
        text += &format!("; the worst cases of the others: {}", others.join(", "));
    }
    text + "."
}

/// Which barrier leads each application setting, grouped by barrier.
fn leaders_sentence(apps: &[&Ranking]) -> String {
    let mut groups: Vec<(Barrier, Vec<String>)> = Vec::new();
    for r in apps {
        let Some(lead) = leader(r) else { continue };
        match groups.iter_mut().find(|(b, _)| *b == lead.barrier) {
            Some((_, settings)) => settings.push(setting(r)),
            None => groups.push((lead.barrier, vec![setting(r)])),
        }
    }
    groups.sort_by_key(|(b, settings)| (std::cmp::Reverse(settings.len()), analysis::barrier_order(*b)));
    if let [(only, settings)] = groups.as_slice() {
        let count = plural(settings.len(), "setting");
        return format!(
            "**{}** is the fastest on the most grids in every application setting ({count}).",
            barrier_label(*only)
        );
    }
    let parts: Vec<String> = groups
        .iter()
        .map(|(b, settings)| format!("**{}** in {} ({})", barrier_label(*b), settings.len(), settings.join("; ")))
        .collect();
    format!("The barrier fastest on the most grids depends on the workload and the block size: {}.", parts.join(", "))
}

/// The barrier alone: which barrier has the cheapest phase boundary on the most grids, pooled over block sizes.
fn barrier_alone_sentence(alone: &[&Ranking]) -> Option<String> {
    let grids: usize = alone.iter().map(|r| r.grids.len()).sum();
    let pooled = |b: Barrier| alone.iter().filter_map(|r| r.standing(b)).map(|s| s.wins).sum::<usize>();
    let best = BARRIERS
        .into_iter()
        .filter(|&b| pooled(b) > 0)
        .max_by_key(|&b| (pooled(b), std::cmp::Reverse(analysis::barrier_order(b))))?;
    let mut text = format!(
        "The barrier alone (empty phases, {grids} grids): **{}** has the cheapest phase boundary on {} of them",
        barrier_label(best),
        pooled(best)
    );
    if let Some((worst, at, blocks)) = worst_over(alone, best).filter(|w| w.0 > 1.0 + TIE) {
        text += &format!(
            ", but is up to {} slower than the fastest on {blocks} blocks of {} threads",
            slower(worst),
            at.threads
        );
    }
    Some(text + ".")
}

/// The summary over all settings, one sentence per point.
pub fn overall(rankings: &[Ranking]) -> Vec<String> {
    let apps: Vec<&Ranking> = rankings.iter().filter(|r| r.workload != Workload::EmptyPhases).collect();
    let alone: Vec<&Ranking> = rankings.iter().filter(|r| r.workload == Workload::EmptyPhases).collect();
    let mut out = Vec::new();
    if !apps.is_empty() {
        out.push(safest_sentence(&apps));
        out.push(leaders_sentence(&apps));
    }
    out.extend(barrier_alone_sentence(&alone));
    out
}

/// The rules this module applies, for the report.
pub fn rules() -> Vec<String> {
    vec![
        "Compared: every barrier timed among cooperative, lbs, ilbs:6, ilbs:√N, lfs, ulfs and multi-launch, per \
         workload and block size (the paper's setting and the extended sweep separately), on every grid where at \
         least one of them was timed. A barrier's time on a grid is its median: kernel time for the \
         applications, the cost of one phase boundary for empty phases."
            .to_owned(),
        format!(
            "Fastest: on each grid, the barrier with the lowest median and every barrier within {:.0}% of it \
             (a tie counts for each). A cell's first number counts those grids, out of the grids where the \
             barrier ran (LFS only up to the block size).",
            TIE * 100.0
        ),
        "Slowdown: a barrier's median over the lowest median on the same grid; the cell's second number is its \
         geometric mean over the grids where the barrier ran, the third the largest, both as percentages slower."
            .to_owned(),
        "Per workload: the leader is the barrier fastest on the most grids (a lower mean slowdown breaks a tie); \
         among the other barriers that ran on every grid, the closest alternative has the lowest mean slowdown \
         and the slowest the highest."
            .to_owned(),
        "In short: for the applications, the barriers that ran on every grid of every setting are ordered by \
         their largest slowdown anywhere, and each setting's leader is named; for the barrier alone, the \
         barrier fastest on the most grids over all settings is named, with its largest slowdown."
            .to_owned(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::tests::run;
    use crate::model::Run;

    /// Three repetitions of `barrier` on `blocks` blocks of `threads` threads, all taking `time` µs.
    fn timed(e: Experiment, w: Workload, threads: u32, blocks: u32, barrier: Barrier, time: f64) -> Vec<Run> {
        (1..=3).map(|rep| Run { threads, ..run(e, w, blocks, barrier, rep, time) }).collect()
    }

    /// Bitonic sort in the paper's setting on 7, 8 and 9 blocks: multi-launch is fastest
    /// everywhere, cooperative ties with it on 8 blocks, LBS is 10% slower everywhere, and
    /// LFS ran only on 7 blocks, 50% slower.
    fn known() -> Vec<Run> {
        let (e, w) = (Experiment::Paper, Workload::Bitonic);
        let mut runs = Vec::new();
        for blocks in [7, 8, 9] {
            runs.extend(timed(e, w, 32, blocks, Barrier::MultiLaunch, 100.0));
            runs.extend(timed(e, w, 32, blocks, Barrier::Lbs, 110.0));
            let cooperative = if blocks == 8 { 100.5 } else { 120.0 };
            runs.extend(timed(e, w, 32, blocks, Barrier::Cooperative, cooperative));
        }
        runs.extend(timed(e, w, 32, 7, Barrier::Lfs, 150.0));
        runs
    }

    #[test]
    fn the_leader_wins_most_grids_and_the_mean_slowdown_breaks_ties() {
        let rankings = rankings(&Dataset::from_runs(&known()));
        assert_eq!(rankings.len(), 1);
        let r = &rankings[0];
        assert_eq!(leader(r).map(|s| s.barrier), Some(Barrier::MultiLaunch));
        let (closest, slowest) = alternatives(r, Barrier::MultiLaunch);
        assert_eq!(closest.map(|s| s.barrier), Some(Barrier::Lbs));
        assert_eq!(slowest.map(|s| s.barrier), Some(Barrier::Cooperative), "lfs ran on one grid only");
        // Without multi-launch, LBS is the fastest on 7 blocks, cooperative on 8, and on 9 they tie
        // within 1% (109 against 110 µs): two grids each, and the lower mean slowdown leads.
        let mut runs = known();
        runs.retain(|run| run.barrier != Barrier::MultiLaunch);
        retime(&mut runs, 9, Barrier::Cooperative, 109.0);
        let r = &rankings_of(&runs)[0];
        let (lbs, cooperative) = (r.standing(Barrier::Lbs).expect("lbs"), r.standing(Barrier::Cooperative).expect("c"));
        assert_eq!((lbs.wins, cooperative.wins), (2, 2));
        assert!(cooperative.mean_slowdown < lbs.mean_slowdown);
        assert_eq!(leader(r).map(|s| s.barrier), Some(Barrier::Cooperative));
    }

    fn rankings_of(runs: &[Run]) -> Vec<Ranking> {
        rankings(&Dataset::from_runs(runs))
    }

    /// Sets the time of every repetition of `barrier` on `blocks` blocks.
    fn retime(runs: &mut [Run], blocks: u32, barrier: Barrier, time: f64) {
        for run in runs.iter_mut().filter(|r| r.blocks == blocks && r.barrier == barrier) {
            run.time_us = Some(time);
        }
    }

    #[test]
    fn the_advice_follows_the_numbers() {
        let text = advice(&rankings_of(&known())[0]);
        assert_eq!(
            text,
            "Bitonic sort, 3 grids, 7–9 blocks: **multi-launch** is the fastest on all 3 grids; the closest \
             alternative is lbs, 10.0% slower on average and 10.0% at worst; the slowest is cooperative, 13.1% \
             slower on average and up to 20.0% (on 7 blocks)."
        );
        // Make LBS the fastest on 9 blocks: the text must say so.
        let mut runs = known();
        retime(&mut runs, 9, Barrier::Lbs, 80.0);
        let text = advice(&rankings_of(&runs)[0]);
        assert!(text.contains("**multi-launch** is the fastest on 2 of 3 grids and at most 25.0% slower"), "{text}");
        assert!(text.contains("alternative is lbs (also among the fastest on 1 grid), 6.6% slower"), "{text}");
    }

    #[test]
    fn a_leader_that_ran_on_few_grids_says_so() {
        let mut runs = known();
        retime(&mut runs, 7, Barrier::Lfs, 50.0);
        runs.extend(timed(Experiment::Paper, Workload::Bitonic, 32, 8, Barrier::Lfs, 40.0));
        let text = advice(&rankings_of(&runs)[0]);
        assert!(text.contains("**lfs** is the fastest on 2 of 3 grids (it ran on 2 of them);"), "{text}");
        assert!(text.contains("the closest alternative is multi-launch (also among the fastest on 1 grid)"), "{text}");
    }

    #[test]
    fn the_summary_names_the_safest_barrier_the_leaders_and_the_barrier_alone() {
        let mut runs = known();
        let (e, t) = (Experiment::Extended, 256);
        for blocks in [33, 66] {
            runs.extend(timed(e, Workload::SmithWaterman, t, blocks, Barrier::MultiLaunch, 130.0));
            runs.extend(timed(e, Workload::SmithWaterman, t, blocks, Barrier::Lbs, 100.0));
            runs.extend(timed(e, Workload::SmithWaterman, t, blocks, Barrier::Cooperative, 120.0));
            for (phases, cost) in [(10, 0.0), (20, 10.0)] {
                let w = Workload::EmptyPhases;
                for barrier in [Barrier::Cooperative, Barrier::Lbs] {
                    let time = if barrier == Barrier::Lbs { 2.0 * cost } else { cost };
                    runs.extend(timed(e, w, t, blocks, barrier, time).into_iter().map(|r| Run { phases, ..r }));
                }
            }
        }
        let rankings = rankings_of(&runs);
        assert_eq!(rankings.len(), 3, "paper bitonic, extended Smith-Waterman and empty phases at 256 threads");
        let lines = overall(&rankings);
        assert_eq!(lines.len(), 3);
        assert!(
            lines[0].contains("(2 settings, 5 grids)") && lines[0].contains("**lbs** has the smallest worst case"),
            "{}",
            lines[0]
        );
        assert!(lines[0].contains("at most 10.0% slower") && lines[0].contains("cooperative 20.0%"), "{}", lines[0]);
        assert!(lines[0].contains("multi-launch 30.0%"), "{}", lines[0]);
        let leaders =
            "**lbs** in 1 (Smith-Waterman, 33–66 blocks of 256 threads), **multi-launch** in 1 (Bitonic sort, \
                       7–9 blocks of 32 threads).";
        assert!(lines[1].ends_with(leaders), "{}", lines[1]);
        assert!(lines[2].contains("**cooperative** has the cheapest phase boundary on 2 of them"), "{}", lines[2]);
        assert!(!lines[2].contains("up to"), "cooperative is always the cheapest: {}", lines[2]);
    }

    #[test]
    fn the_settings_are_the_papers_then_the_extended_block_sizes() {
        let mut runs = known();
        runs.extend(timed(Experiment::Extended, Workload::Bitonic, 1024, 33, Barrier::Lbs, 1.0));
        runs.extend(timed(Experiment::Extended, Workload::Bitonic, 256, 33, Barrier::Lbs, 1.0));
        let settings = settings(&Dataset::from_runs(&runs));
        assert_eq!(settings, [(Experiment::Paper, 32), (Experiment::Extended, 256), (Experiment::Extended, 1024)]);
        assert!(rules().join(" ").contains("within 1% of it"));
    }
}
