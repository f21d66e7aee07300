//! `report.md`: the machine, the method, the verdicts, and every table, all
//! computed from the runs; plus the short summary printed after a run.

use std::collections::{BTreeMap, BTreeSet};

use gsync::Barrier;

use crate::advice;
use crate::analysis::{self, Dataset, Ranking};
use crate::markdown::{maybe_micros, micros, percent, ratio, signed_percent, with_range, Align, Table};
use crate::model::{barrier_label, Experiment, Workload};
use crate::paper;
use crate::record::{Meta, COLUMN_DOCS};
use crate::verdict::{self, is_jump, root_fit, RootFit, Verdict};

/// The whole report as Markdown; `figures` are the stems of the charts written next to it.
pub fn markdown(data: &Dataset, meta: &Meta, figures: &[String]) -> String {
    let verdicts = verdict::all(data);
    let mut out = String::new();
    out += "# Replication: \"Improving the inter-block synchronization methods in CUDA\"\n\n";
    out += "Savadi, Salavatizadeh and Riahi measured four software grid barriers — LBS, their ILBS, LFS and \
            their ULFS — inside Smith-Waterman and bitonic sort on a GTX 1070 with 32 threads per block and 7 \
            to 60 blocks. This report repeats those experiments with gsync's implementations of the same \
            barriers (plus CUDA's cooperative groups and one launch per phase), and extends them where the \
            paper could not go. Every number below is computed from `runs.csv` in this directory; \
            `gsync-bench render --out DIR` regenerates this file and the plots from it.\n\n";
    out += &machine(meta);
    out += &method(data, meta);
    out += &verdict_section(&verdicts);
    out += &choice_section(data, meta);
    out += &tables_4_5(data, figures);
    out += &jump_section(data, figures);
    out += &multiples_section(data, figures);
    out += &ilbs_vs_ulfs(data, figures);
    out += &groups_section(data, figures);
    out += &all_barriers_section(data, figures);
    out += &sync_share_section(data);
    out += &extended_section(data, figures);
    out += &failures_section(data);
    out += &files_section(figures);
    out
}

/// What a run prints when it finishes: Tables 4 and 5, the jump, and the verdicts.
pub fn summary(data: &Dataset) -> String {
    let mut out = String::new();
    for w in Workload::APPS {
        out += &band_table(data, w);
        out += "\n";
    }
    out += &jump_table(data).render();
    out += "\n";
    out += &verdict_table(&verdict::all(data)).render();
    out
}

fn figure_link(figures: &[String], stem: &str, caption: &str) -> String {
    if figures.iter().any(|f| f == stem) {
        format!("![{caption}]({stem}.svg)\n\n[{stem}.svg]({stem}.svg) · [{stem}.png]({stem}.png)\n\n")
    } else {
        String::new()
    }
}

fn machine(meta: &Meta) -> String {
    let mut table = Table::new(&[("", Align::Left), ("this run", Align::Left), ("the paper", Align::Left)]);
    let gpu = format!(
        "{} ({} SMs, compute capability {}, {})",
        meta.show("gpu"),
        meta.show("sm_count"),
        meta.show("compute_capability"),
        meta.show("memory")
    );
    table.row(vec!["GPU".into(), gpu, paper::MACHINE.into()]);
    table.row(vec!["backend".into(), meta.show("backend").into(), "CUDA".into()]);
    table.row(vec!["NVIDIA driver".into(), meta.show("driver").into(), "not stated".into()]);
    let nvrtc = match meta.get("nvrtc_library") {
        Some(lib) => format!("NVRTC {} ({lib})", meta.show("nvrtc")),
        None => format!("NVRTC {}", meta.show("nvrtc")),
    };
    table.row(vec!["CUDA".into(), nvrtc, "CUDA 9.2".into()]);
    table.row(vec!["CUDA supported by the driver".into(), meta.show("driver_cuda").into(), "–".into()]);
    table.row(vec!["date".into(), meta.show("date").into(), "–".into()]);
    table.row(vec![
        "gsync-bench".into(),
        format!("{} (commit {})", meta.show("version"), meta.show("commit")),
        "–".into(),
    ]);
    table.row(vec!["command".into(), format!("`{}`", meta.show("command")), "–".into()]);
    table.row(vec!["wall time".into(), meta.show("wall_time").into(), "–".into()]);
    format!(
        "## Machine\n\n{}\nThe CUDA version is that of NVRTC, which compiled every kernel for this GPU; the \
         CUDA version the driver supports is `cuDriverGetVersion`'s (runs before it was recorded say \
         \"not recorded\"), and the driver version is read from `/proc/driver/nvidia/version`.\n\n",
        table.render()
    )
}

fn method(data: &Dataset, meta: &Meta) -> String {
    let t = data.totals;
    let mut out = String::from("## How it was measured\n\n");
    out += &format!(
        "- **Repetitions.** Each configuration ran once as a warm-up (compilation, loading, first touch; verified, \
         never used) and then {} times. Repetitions are interleaved across the barriers compared on one grid, so \
         that drift affects them alike. Tables give the median, with the range (min–max) of the repetitions in \
         parentheses where there is room; the CSV has every run.\n",
        meta.show("reps")
    );
    out += "- **Time.** The kernel's CUDA-event time (`LaunchReport::gpu_time`): events recorded just before the \
            launch and after it (for MultiLaunch, before the first and after the last of its launches). Uploads, \
            downloads and verification are outside it.\n";
    out += &format!(
        "- **Same inputs.** Each problem's input is generated once from seed {} and used by every barrier and \
         every grid.\n",
        meta.show("seed")
    );
    out += &format!(
        "- **Verified, every run.** Bitonic: the output equals the CPU's sort of the same keys. Smith-Waterman: \
         score and end position equal the CPU Gotoh reference (`align_reference`). Empty phases: the last phase's \
         marker. A wrong answer is recorded as `wrong` and never timed. This run: {} rows, {} verified \
         ({} of them timed, the rest warm-ups), **{} wrong**, **{} failed**, {} configurations refused by the \
         barrier or the runtime (e.g. LFS beyond the block size).\n",
        data.rows, t.ok, data.timed_rows, t.wrong, t.error, t.refused
    );
    out += "- **Barrier cost alone.** `empty_phases` runs P and 2P nearly empty phases; one phase boundary costs \
            (t(2P) − t(P)) / P, which cancels the launch itself. Each repetition gives one such figure.\n";
    out += &format!("- **Problems.** {}\n", meta.show("problems_note"));
    out += "\n";
    let mut table = Table::new(&[
        ("experiment", Align::Left),
        ("workload", Align::Left),
        ("threads", Align::Right),
        ("problem", Align::Left),
        ("grid_sync() per launch", Align::Right),
    ]);
    let mut seen = BTreeSet::new();
    for (key, stats) in data.all() {
        let entry = (key.experiment, key.workload, key.threads, stats.problem.clone(), stats.phases);
        if seen.insert(entry.clone()) {
            table.row(vec![
                entry.0.to_string(),
                entry.1.to_string(),
                entry.2.to_string(),
                entry.3,
                entry.4.to_string(),
            ]);
        }
    }
    out += &table.render();
    out += "\n";
    out
}

fn verdict_table(verdicts: &[Verdict]) -> Table {
    let mut table =
        Table::new(&[("#", Align::Right), ("claim", Align::Left), ("verdict", Align::Left), ("evidence", Align::Left)]);
    for (i, v) in verdicts.iter().enumerate() {
        table.row(vec![(i + 1).to_string(), v.claim.clone(), format!("**{}**", v.outcome), v.evidence.clone()]);
    }
    table
}

fn verdict_section(verdicts: &[Verdict]) -> String {
    let mut out = String::from("## Verdicts\n\n");
    out += "Each verdict follows from the measurements by the rules listed below the table; nothing here is \
            written by hand. *Confirmed*: the measurements show what the paper reports. *Refuted*: they show the \
            opposite or no effect. *Different*: the effect is there but differs in size or scope, for the reason \
            given. *Not tested*: the runs needed are missing.\n\n";
    out += &verdict_table(verdicts).render();
    out += "\nRules:\n\n";
    for rule in verdict::rules() {
        out += &format!("- {rule}\n");
    }
    out += "\n";
    out
}

/// A barrier's cell in a choice table: "wins/grids · mean · worst", bold for the leader.
fn standing_cell(ranking: &Ranking, barrier: Barrier) -> String {
    let Some(s) = ranking.standing(barrier) else { return "–".to_owned() };
    let cell = format!(
        "{}/{} · {} · {}",
        s.wins,
        s.grids,
        signed_percent(s.mean_slowdown - 1.0),
        signed_percent(s.worst.0 - 1.0)
    );
    if advice::leader(ranking).is_some_and(|lead| lead.barrier == barrier) {
        format!("**{cell}**")
    } else {
        cell
    }
}

/// One setting's table: a row per workload, a column per barrier timed in any of them.
fn choice_table(rankings: &[&Ranking]) -> Table {
    let barriers: Vec<Barrier> =
        advice::BARRIERS.into_iter().filter(|&b| rankings.iter().any(|r| r.standing(b).is_some())).collect();
    let mut headers = vec![("workload", Align::Left), ("grids", Align::Right)];
    let labels: Vec<String> = barriers.iter().map(|&b| barrier_label(b)).collect();
    headers.extend(labels.iter().map(|l| (l.as_str(), Align::Right)));
    let mut table = Table::new(&headers);
    for r in rankings {
        let mut cells = vec![r.workload.title().to_owned(), format!("{} ({})", r.grids.len(), advice::span(r))];
        cells.extend(barriers.iter().map(|&b| standing_cell(r, b)));
        table.row(cells);
    }
    table
}

/// A setting's heading: its block size, its grids and where it comes from.
fn setting_heading(e: Experiment, threads: u32, rankings: &[&Ranking]) -> String {
    let first = rankings.iter().filter_map(|r| r.grids.first()).min();
    let last = rankings.iter().filter_map(|r| r.grids.last()).max();
    let grids = match (first, last) {
        (Some(first), Some(last)) => format!(", {first}–{last} blocks"),
        _ => String::new(),
    };
    let source = if e == Experiment::Paper { "the paper's setting" } else { "beyond the paper" };
    format!("### {threads} threads per block{grids} ({source})\n\n")
}

fn choice_section(data: &Dataset, meta: &Meta) -> String {
    let rankings = advice::rankings(data);
    if rankings.is_empty() {
        return String::new();
    }
    let mut out = String::from("## Which barrier to use\n\n");
    out += &format!(
        "The verdicts say whether the paper's claims hold; this section answers which barrier to pick, from the \
         same runs. For each workload and block size, each barrier is compared on every grid with the fastest \
         barrier on that grid. A cell reads *wins/grids · mean · worst*: the grids where the barrier is the \
         fastest (ties within {:.0}% count for each), out of the grids where it ran; then how much slower than \
         the fastest it is, as the geometric mean over those grids and the worst case. The leader of each row is \
         in bold. Everything here, the sentences included, is computed from the measurements by the rules \
         below; it holds for this GPU ({}) and these problem sizes.\n\n",
        advice::TIE * 100.0,
        meta.show("gpu")
    );
    out += "Rules:\n\n";
    for rule in advice::rules() {
        out += &format!("- {rule}\n");
    }
    out += "\n";
    for (e, threads) in advice::settings(data) {
        let group: Vec<&Ranking> = rankings.iter().filter(|r| r.experiment == e && r.threads == threads).collect();
        if group.is_empty() {
            continue;
        }
        out += &setting_heading(e, threads, &group);
        out += &choice_table(&group).render();
        out += "\n";
        for r in &group {
            out += &format!("- {}\n", advice::advice(r));
        }
        out += "\n";
    }
    out += "### In short\n\n";
    for line in advice::overall(&rankings) {
        out += &format!("- {line}\n");
    }
    out += "\n";
    out
}

fn band_table(data: &Dataset, w: Workload) -> String {
    let rows = analysis::band_rows(data, w);
    let number = paper::table_number(w).unwrap_or(0);
    let mut table = Table::new(&[
        ("blocks", Align::Left),
        ("t_LBS (µs)", Align::Right),
        ("t_ILBS, 6 groups (µs)", Align::Right),
        ("speedup", Align::Right),
        ("per-grid speedups", Align::Right),
        ("t_ILBS, √N groups (µs)", Align::Right),
        ("speedup, √N", Align::Right),
        ("paper t_LBS", Align::Right),
        ("paper t_ILBS", Align::Right),
        ("paper speedup", Align::Right),
    ]);
    for r in &rows {
        table.row(vec![
            r.paper.label(),
            maybe_micros(r.t_lbs),
            maybe_micros(r.t_ilbs),
            format!("**{}**", ratio(r.speedup)),
            r.per_grid.map_or("–".into(), |(lo, hi)| format!("{lo:.2}–{hi:.2}")),
            maybe_micros(r.t_ilbs_sqrt),
            ratio(r.speedup_sqrt),
            format!("{}", r.paper.t_lbs),
            format!("{}", r.paper.t_ilbs),
            format!("**{:.2}**", r.paper.speedup),
        ]);
    }
    format!("Table {number} — {}: ILBS over LBS per band\n\n{}", w.title(), table.render())
}

fn tables_4_5(data: &Dataset, figures: &[String]) -> String {
    let mut out = String::from("## Tables 4 and 5: ILBS over LBS\n\n");
    out += &format!(
        "As in the paper: 32 threads per block, ILBS with 6 groups, the grids grouped into bands of nine; a band's \
         time is the mean over its grids of each grid's median, and speedup = t_LBS / t_ILBS (the paper's \
         equation 7). \"Per-grid speedups\" is the range of t_LBS / t_ILBS of the single grids in the band. The \
         √N columns repeat the comparison with ILBS's default, round(√N) groups. Our times are µs; the paper's \
         are in its own unit, {}, so only the speedups compare directly.\n\n",
        paper::TIME_UNIT
    );
    for note in paper::inconsistencies() {
        out += &format!(
            "Note on the paper's numbers: {note}. The tables here show the printed values; verdicts compare with \
             the printed speedups.\n\n"
        );
    }
    for w in Workload::APPS {
        out += &band_table(data, w);
        out += "\n";
        if let Some((fig, _, _)) = paper::figures(w) {
            let stem = format!("fig{fig:02}_{}_lbs_ilbs", w.short());
            out += &figure_link(figures, &stem, &format!("Figure {fig} analogue: {} LBS vs ILBS", w.title()));
        }
    }
    out += &figure_link(figures, "tables4_5_speedup", "Speedup per band, measured and the paper's");
    out
}

fn jump_table(data: &Dataset) -> Table {
    let b = paper::BLOCK_SIZE;
    let mut table = Table::new(&[
        ("workload", Align::Left),
        ("LFS, 32 blocks", Align::Right),
        ("ULFS, 32 blocks", Align::Right),
        ("ULFS, 33 blocks", Align::Right),
        ("ULFS(33) vs LFS(32)", Align::Right),
        ("paper", Align::Right),
        ("every ULFS(33) run slower", Align::Left),
        ("LBS 32 → 33", Align::Right),
    ]);
    for w in [Workload::SmithWaterman, Workload::Bitonic, Workload::EmptyPhases] {
        let Some(jump) = analysis::ulfs_jump(data, Experiment::Paper, w, b) else { continue };
        let unit = if w == Workload::EmptyPhases { " per phase" } else { "" };
        table.row(vec![
            format!("{}{unit}", w.title()),
            with_range(&jump.lfs_below),
            jump.ulfs_below.as_ref().map_or("–".into(), with_range),
            with_range(&jump.ulfs_at),
            format!("**{}**", signed_percent(jump.rise)),
            paper::ulfs_jump(w).map_or("–".into(), signed_percent),
            if jump.disjoint { "yes" } else { "no" }.into(),
            jump.control_rise.map_or("–".into(), signed_percent),
        ]);
    }
    table
}

fn jump_section(data: &Dataset, figures: &[String]) -> String {
    let mut out = String::from("## LFS's limit and the ULFS jump at 33 blocks (Figures 9 and 10)\n\n");
    out += "LFS's master block gathers with one thread per block, so it serves at most as many blocks as a block \
            has threads (32 here); the runtime refuses more, and those configurations are recorded as refused. \
            ULFS is LFS on a tree with fan-out 32: identical to LFS up to 32 blocks, one more level from 33. The \
            paper reports ULFS on 33 blocks taking 46.8% (Smith-Waterman) and 34% (bitonic) more time than LFS \
            just below. Times in µs, median (min–max); the last row is the barrier alone. \"LBS 32 → 33\" is what one \
            more block costs a barrier without a tree, the control for the jump.\n\n";
    let table = jump_table(data);
    if table.is_empty() {
        out += "_Not measured._\n\n";
    } else {
        out += &table.render();
        out += "\n";
    }
    let b = paper::BLOCK_SIZE;
    for w in Workload::APPS {
        if let Some(share) = analysis::share(data, Experiment::Paper, w, b, b + 1, Barrier::Ulfs) {
            out += &format!(
                "- {}: on 33 blocks, {} phase boundaries × {} µs = {} µs of ULFS barriers, {} of the run's {} µs.\n",
                w.title(),
                share.phases,
                micros(share.cost_us),
                micros(share.sync_us()),
                percent(share.fraction()),
                micros(share.total_us)
            );
        }
    }
    out += "\n";
    for w in Workload::APPS {
        if let Some((_, fig, _)) = paper::figures(w) {
            let stem = format!("fig{fig:02}_{}_lfs_ulfs", w.short());
            out += &figure_link(figures, &stem, &format!("Figure {fig} analogue: {} LFS vs ULFS", w.title()));
        }
    }
    out
}

fn multiples_section(data: &Dataset, figures: &[String]) -> String {
    if !data.has(Experiment::Multiples) {
        return String::new();
    }
    let b = paper::BLOCK_SIZE;
    let mut out = String::from("## ULFS around multiples of the block size\n\n");
    out += "The paper: ULFS's time jumps whenever the number of blocks passes a multiple of the block size. \
            Measured at k·B − 1, k·B and k·B + 1 blocks of 32 threads, with LBS (no tree) as a control. ULFS's \
            tree has fan-out B, so it gains a level only when N passes a power of B (33, 1025, …).\n\n";
    for w in [Workload::EmptyPhases, Workload::SmithWaterman, Workload::Bitonic] {
        let crossings = analysis::crossings(data, w, b, Barrier::Lbs);
        if crossings.is_empty() {
            continue;
        }
        let mut table = Table::new(&[
            ("k·B", Align::Right),
            ("ULFS k·B − 1", Align::Right),
            ("ULFS k·B", Align::Right),
            ("ULFS k·B + 1", Align::Right),
            ("step before", Align::Right),
            ("step across", Align::Right),
            ("LBS step across", Align::Right),
            ("jump", Align::Left),
        ]);
        for c in &crossings {
            table.row(vec![
                c.multiple.to_string(),
                c.before.as_ref().map_or("–".into(), with_range),
                with_range(&c.at),
                with_range(&c.after),
                c.step_before.map_or("–".into(), signed_percent),
                format!("**{}**", signed_percent(c.step)),
                c.control_step.map_or("–".into(), signed_percent),
                if is_jump(c) { "yes" } else { "no" }.into(),
            ]);
        }
        let unit = if w == Workload::EmptyPhases { "µs per phase boundary" } else { "µs per run" };
        out += &format!("{}, {unit}:\n\n{}\n", w.title(), table.render());
        out += &figure_link(figures, &format!("multiples_{}", w.short()), &format!("{} around multiples", w.title()));
    }
    out
}

fn ilbs_vs_ulfs(data: &Dataset, figures: &[String]) -> String {
    let mut out = String::from("## ILBS vs ULFS (Figures 11 and 12)\n\n");
    let six = Barrier::Ilbs { groups: Some(paper::ILBS_GROUPS) };
    for w in Workload::APPS {
        let (wins, total, _) = analysis::head_to_head(data, w, Barrier::Ulfs, six);
        if total > 0 {
            out += &format!(
                "- {}: ULFS's median is lower than ILBS's (6 groups) on {wins} of {total} grids.\n",
                w.title()
            );
        }
    }
    out += "\n";
    for w in Workload::APPS {
        if let Some((_, _, fig)) = paper::figures(w) {
            let stem = format!("fig{fig:02}_{}_ilbs_ulfs", w.short());
            out += &figure_link(figures, &stem, &format!("Figure {fig} analogue: {} ILBS vs ULFS", w.title()));
        }
    }
    out
}

fn groups_section(data: &Dataset, figures: &[String]) -> String {
    if !data.has(Experiment::Groups) {
        return String::new();
    }
    let mut out = String::from("## ILBS group count: is √N optimal?\n\n");
    out += "The paper derives round(√N) as ILBS's best group count (N blocks). Here every group count from 1 to N \
            (on larger grids a geometric ladder plus the neighbourhood of √N) was run on fixed grids of 32-thread \
            blocks. Times in µs (empty phases: per phase boundary).\n\n";
    let mut table = Table::new(&[
        ("workload", Align::Left),
        ("N", Align::Right),
        ("counts tried", Align::Right),
        ("best count", Align::Right),
        ("at best", Align::Right),
        ("√N", Align::Right),
        ("at √N", Align::Right),
        ("√N vs best", Align::Right),
        ("span of all counts", Align::Right),
        ("√N is", Align::Left),
    ]);
    let mut stems = Vec::new();
    for w in [Workload::EmptyPhases, Workload::SmithWaterman, Workload::Bitonic] {
        for sweep in analysis::group_sweeps(data, w) {
            let fit = match root_fit(&sweep) {
                RootFit::Optimal => "optimal within tolerance",
                RootFit::Flat => "irrelevant (flat)",
                RootFit::Beaten => "beaten",
                RootFit::Missing => "not measured",
            };
            let best = sweep.points.iter().find(|p| p.0 == sweep.best).map(|p| p.1);
            table.row(vec![
                w.title().into(),
                sweep.blocks.to_string(),
                sweep.points.len().to_string(),
                sweep.best.to_string(),
                best.as_ref().map_or("–".into(), with_range),
                sweep.root.to_string(),
                sweep.root_summary.as_ref().map_or("–".into(), with_range),
                sweep.root_excess().map_or("–".into(), signed_percent),
                signed_percent(sweep.range),
                fit.into(),
            ]);
            stems.push((
                format!("groups_{}_n{}", w.short(), sweep.blocks),
                format!("{} on {} blocks", w.title(), sweep.blocks),
            ));
        }
    }
    out += &table.render();
    out += "\n";
    for (stem, caption) in stems {
        out += &figure_link(figures, &stem, &format!("ILBS group sweep: {caption}"));
    }
    out
}

/// A table of medians (with ranges) of every barrier over the grids of an experiment.
fn grid_table(data: &Dataset, e: Experiment, w: Workload, threads: u32, with_share: bool) -> Table {
    let barriers = data.barriers(e, w, threads);
    let headers: Vec<String> = barriers.iter().map(|&b| barrier_label(b)).collect();
    let mut table = Table::numeric("blocks", &headers);
    for blocks in data.grids(e, w, threads) {
        let mut cells = vec![blocks.to_string()];
        for &barrier in &barriers {
            let cell = match data.get(e, w, threads, blocks, barrier) {
                Some(stats) if stats.refused() => "refused".to_owned(),
                Some(stats) => match (stats.summary, with_share) {
                    (Some(s), true) => match analysis::share(data, e, w, threads, blocks, barrier) {
                        Some(share) => format!("{} · {} sync", with_range(&s), percent(share.fraction())),
                        None => with_range(&s),
                    },
                    (Some(s), false) => with_range(&s),
                    (None, _) if stats.counts.wrong > 0 => "wrong".into(),
                    (None, _) => "failed".into(),
                },
                None => "–".into(),
            };
            cells.push(cell);
        }
        table.row(cells);
    }
    table
}

fn all_barriers_section(data: &Dataset, figures: &[String]) -> String {
    let e = Experiment::Paper;
    let b = paper::BLOCK_SIZE;
    if !data.has(e) {
        return String::new();
    }
    let mut out = String::from("## Every barrier in the paper's setting\n\n");
    out += "32 threads per block, 7 to 60 blocks; µs, median (min–max). \"refused\": the barrier cannot serve the \
            grid (LFS beyond the block size).\n\n";
    for w in [Workload::SmithWaterman, Workload::Bitonic, Workload::EmptyPhases] {
        let table = grid_table(data, e, w, b, false);
        if table.is_empty() {
            continue;
        }
        let what = if w == Workload::EmptyPhases { "cost of one phase boundary" } else { "kernel time" };
        out += &format!("### {} — {what}\n\n{}\n", w.title(), table.render());
        out += &figure_link(figures, &format!("paper_all_{}", w.short()), &format!("{}: every barrier", w.title()));
    }
    out
}

fn sync_share_section(data: &Dataset) -> String {
    let e = Experiment::Paper;
    let b = paper::BLOCK_SIZE;
    if data.grids(e, Workload::EmptyPhases, b).is_empty() {
        return String::new();
    }
    let mut out = String::from("## Synchronization per phase vs compute\n\n");
    out += "For each application run, the time spent in barriers is estimated as its number of phase boundaries \
            times the cost of one boundary under the same barrier on the same grid, measured alone with empty \
            phases; the rest is compute (including any load imbalance, which shows up as waiting at a barrier \
            but is not the barrier's cost). Cells: cost of one boundary in µs · share of the application's median \
            time, averaged over the band.\n\n";
    for w in Workload::APPS {
        let barriers = data.barriers(e, w, b);
        if barriers.is_empty() {
            continue;
        }
        let bands: Vec<String> = paper::TABLE_4.iter().map(|band| band.label()).collect();
        let mut table = Table::numeric("barrier", &bands);
        for barrier in barriers {
            let mut cells = vec![barrier_label(barrier)];
            for band in &paper::TABLE_4 {
                let shares: Vec<analysis::Share> =
                    (band.first..=band.last).filter_map(|n| analysis::share(data, e, w, b, n, barrier)).collect();
                let cost = crate::stats::mean(&shares.iter().map(|s| s.cost_us).collect::<Vec<_>>());
                let fraction = crate::stats::mean(&shares.iter().map(|s| s.fraction()).collect::<Vec<_>>());
                cells.push(match (cost, fraction) {
                    (Some(c), Some(f)) => format!("{} · {}", micros(c), percent(f)),
                    _ => "–".into(),
                });
            }
            table.row(cells);
        }
        let phases = data.cells(e, w, b).map(|(_, s)| s.phases).next().unwrap_or(0);
        out += &format!("### {} ({phases} phase boundaries per run)\n\n{}\n", w.title(), table.render());
    }
    out
}

fn extended_section(data: &Dataset, figures: &[String]) -> String {
    let e = Experiment::Extended;
    if !data.has(e) {
        return String::new();
    }
    let mut out = String::from("## Beyond the paper: larger blocks and grids\n\n");
    out += "The paper stops at 60 blocks of 32 threads. Here each block size runs from a quarter of the SM count \
            up to the largest grid every device barrier can keep co-resident for that kernel (the runtime refuses \
            larger grids). Application problems are larger than in the paper's setting (see the problem table \
            above); on the largest grids some blocks have no tile to work on and only take part in the barriers, \
            which is what a barrier's scaling is about. Application cells: median (min–max) µs and, after \
            the dot, the estimated share of barriers (phase boundaries × the empty-phase cost on the same \
            grid). Empty phases: µs per phase boundary.\n\n";
    for threads in data.block_sizes(e) {
        out += &format!("### {threads} threads per block\n\n");
        for w in [Workload::EmptyPhases, Workload::SmithWaterman, Workload::Bitonic] {
            let table = grid_table(data, e, w, threads, w != Workload::EmptyPhases);
            if table.is_empty() {
                continue;
            }
            out += &format!("{}:\n\n{}\n", w.title(), table.render());
            out += &figure_link(
                figures,
                &format!("ext_{}_t{threads}", w.short()),
                &format!("{}, {threads} threads", w.title()),
            );
        }
    }
    out
}

fn failures_section(data: &Dataset) -> String {
    let mut out = String::from("## Wrong answers and failures\n\n");
    if data.failures.is_empty() {
        out += "None: every run that was launched verified against its CPU reference.\n\n";
    } else {
        out += &format!(
            "{} runs gave a wrong answer or failed; they are not in any statistic. The first 50:\n\n",
            data.failures.len()
        );
        let mut table = Table::new(&[
            ("experiment", Align::Left),
            ("workload", Align::Left),
            ("grid", Align::Left),
            ("barrier", Align::Left),
            ("rep", Align::Right),
            ("status", Align::Left),
            ("detail", Align::Left),
        ]);
        for run in data.failures.iter().take(50) {
            table.row(vec![
                run.experiment.to_string(),
                run.workload.to_string(),
                format!("{} × {}", run.blocks, run.threads),
                barrier_label(run.barrier),
                run.rep.to_string(),
                run.status.name().into(),
                run.detail.clone(),
            ]);
        }
        out += &table.render();
        out += "\n";
    }
    let mut refusals: BTreeMap<String, (usize, String)> = BTreeMap::new();
    for (_, stats) in data.all().filter(|(_, s)| s.refused()) {
        let example = stats.detail.clone().unwrap_or_default();
        refusals.entry(barrier_label(stats.barrier)).or_insert((0, example)).0 += 1;
    }
    if !refusals.is_empty() {
        out += "Configurations refused before launch (never run, never timed):\n\n";
        for (barrier, (count, example)) in refusals {
            out += &format!("- {barrier}: {count} configurations, e.g. \"{example}\"\n");
        }
        out += "\n";
    }
    out
}

fn files_section(figures: &[String]) -> String {
    let mut out = String::from("## Files\n\n");
    out += "- `runs.csv`: one row per launch (warm-ups included), one per refused configuration. Columns:\n";
    for (column, doc) in COLUMN_DOCS {
        out += &format!("  - `{column}`: {doc}\n");
    }
    out += "- `meta.csv`: the machine and the settings, as key–value pairs.\n";
    out += &format!("- Plots ({} charts, each as SVG and PNG): ", figures.len());
    let links: Vec<String> = figures.iter().map(|f| format!("[{f}]({f}.svg)")).collect();
    out += &links.join(", ");
    out += "\n";
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::tests::uniform_speedup;

    #[test]
    fn the_report_states_the_machine_the_tables_and_the_verdicts() {
        let data = Dataset::from_runs(&uniform_speedup(Workload::Bitonic, 2.0));
        let mut meta = Meta::default();
        meta.set("gpu", "NVIDIA H200");
        meta.set("driver", "580.159.04");
        meta.set("reps", "3");
        let report = markdown(&data, &meta, &["fig08_bitonic_lbs_ilbs".to_owned()]);
        assert!(report.contains("NVIDIA H200") && report.contains("580.159.04"), "machine");
        assert!(report.contains("GTX 1070"), "the paper's machine");
        assert!(report.contains("Table 5 — Bitonic sort: ILBS over LBS per band"));
        assert!(report.contains("| 34–42 |") && report.contains("**2.24**"), "the paper's row");
        assert!(report.contains("**2.00**"), "our speedup");
        assert!(report.contains("![Figure 8 analogue"), "a link to the figure that exists");
        assert!(!report.contains("![Figure 7 analogue"), "no link to a figure that does not");
        assert!(report.contains("| **confirmed** |"), "the bitonic speedup verdict");
        assert!(report.contains("| **not tested** |"), "claims without data");
        assert!(report.contains("None: every run that was launched verified"));
    }

    #[test]
    fn the_choice_of_barrier_follows_the_verdicts() {
        let data = Dataset::from_runs(&uniform_speedup(Workload::Bitonic, 2.0));
        let report = markdown(&data, &Meta::default(), &[]);
        let (verdicts, choice, tables) = (
            report.find("## Verdicts").expect("verdicts"),
            report.find("## Which barrier to use").expect("choice"),
            report.find("## Tables 4 and 5").expect("tables"),
        );
        assert!(verdicts < choice && choice < tables);
        assert!(report.contains("### 32 threads per block, 7–60 blocks (the paper's setting)"), "{report}");
        assert!(report.contains("| workload | grids | lbs | ilbs:6 |"), "only the barriers measured: {report}");
        let row = "| Bitonic sort | 54 (7–60 blocks) | 0/54 · +100.0% · +100.0% | **54/54 · +0.0% · +0.0%** |";
        assert!(report.contains(row), "LBS twice as slow as ILBS (6 groups) everywhere: {report}");
        assert!(report.contains("- Bitonic sort, 54 grids, 7–60 blocks: **ilbs:6** is the fastest on all 54 grids;"));
        assert!(report.contains("Rules:\n\n- Compared: every barrier timed"));
        assert!(
            report.contains("**ilbs:6** is the fastest on the most grids in every application setting (1 setting).")
        );
        assert!(
            report.contains("### In short\n\n- One barrier for every application (1 setting, 54 grids)"),
            "{report}"
        );
    }

    #[test]
    fn the_summary_prints_both_tables() {
        let data = Dataset::from_runs(&uniform_speedup(Workload::SmithWaterman, 1.5));
        let text = summary(&data);
        assert!(text.contains("Table 4 — Smith-Waterman") && text.contains("Table 5 — Bitonic sort"));
        assert!(text.contains("| 7–15 | 113.0 | 75.3 | **1.50** |"), "{text}");
    }
}
