//! The charts of the report: the paper's Figures 7–12 redrawn from our runs
//! (with the paper's numbers overlaid where it gave numbers), and the charts
//! of the experiments the paper could not run.

use gsync::Barrier;

use crate::analysis::{self, Dataset};
use crate::model::{barrier_label, Experiment, Workload};
use crate::paper;
use crate::plots::{barrier_color, Chart, Marker, Point, SecondaryAxis, Series, Style, PAPER_COLOR};

/// A chart and the file stem it is written under.
#[derive(Clone, Debug)]
pub struct Figure {
    /// File name without extension.
    pub stem: String,
    /// The chart.
    pub chart: Chart,
}

/// Every chart the data supports.
pub fn all(data: &Dataset) -> Vec<Figure> {
    let mut figures = Vec::new();
    for w in Workload::APPS {
        figures.extend(paper_figures(data, w));
    }
    figures.push(speedup_bands(data));
    for w in Workload::ALL {
        figures.push(all_barriers(data, w));
    }
    for w in Workload::ALL {
        for sweep in analysis::group_sweeps(data, w) {
            figures.push(group_sweep(w, &sweep));
        }
        figures.push(multiples(data, w));
    }
    for w in Workload::ALL {
        for threads in data.block_sizes(Experiment::Extended) {
            figures.push(extended(data, w, threads));
        }
    }
    figures.retain(|f| f.chart.has_data());
    figures
}

/// Medians (with min–max bars) of one barrier over the grids of an experiment.
pub fn measured(data: &Dataset, e: Experiment, w: Workload, threads: u32, barrier: Barrier) -> Series {
    let points = data
        .cells(e, w, threads)
        .filter(|(_, s)| s.barrier == barrier)
        .filter_map(|(k, s)| {
            let summary = s.summary?;
            Some(Point { x: f64::from(k.blocks), y: summary.median, low: Some(summary.min), high: Some(summary.max) })
        })
        .collect();
    let label = barrier_label(barrier);
    Series { color: barrier_color(&label), name: label, style: Style::Line, points }
}

/// The paper's band values as a staircase over 7–60 blocks.
fn paper_steps(name: &str, color: (u8, u8, u8), values: impl Iterator<Item = (u32, u32, f64)>) -> Series {
    let points = values.flat_map(|(first, last, v)| [Point::at(f64::from(first), v), Point::at(f64::from(last), v)]);
    Series { name: name.to_owned(), color, style: Style::Dashed, points: points.collect() }
}

/// A paler shade of a barrier's colour, for the paper's values of that barrier.
fn paler(label: &str) -> (u8, u8, u8) {
    let (r, g, b) = barrier_color(label);
    let pale = |c: u8| ((u16::from(c) + 2 * u16::from(PAPER_COLOR.0)) / 3) as u8;
    (pale(r), pale(g), pale(b))
}

fn time_axis(w: Workload) -> &'static str {
    if w == Workload::EmptyPhases {
        "cost of one phase boundary (µs)"
    } else {
        "kernel time (µs, median; bars: min–max)"
    }
}

/// Figures 7–12 for one application.
fn paper_figures(data: &Dataset, w: Workload) -> Vec<Figure> {
    let (Some((f_lbs, f_lfs, f_ulfs)), Some(table)) = (paper::figures(w), paper::table(w)) else {
        return Vec::new();
    };
    let e = Experiment::Paper;
    let b = paper::BLOCK_SIZE;
    let six = Barrier::Ilbs { groups: Some(paper::ILBS_GROUPS) };
    let short = w.short();
    let paper_axis = "the paper's values (its units)".to_owned();

    let mut lbs_ilbs = Chart::new(
        format!("Figure {f_lbs} — {}: LBS vs ILBS, 32 threads per block", w.title()),
        "blocks (N)",
        time_axis(w),
    );
    lbs_ilbs.series = vec![
        measured(data, e, w, b, Barrier::Lbs),
        measured(data, e, w, b, six),
        measured(data, e, w, b, Barrier::Ilbs { groups: None }),
    ];
    lbs_ilbs.secondary = Some(SecondaryAxis {
        label: paper_axis.clone(),
        series: vec![
            paper_steps("paper: t_LBS per band", paler("lbs"), table.iter().map(|r| (r.first, r.last, r.t_lbs))),
            paper_steps("paper: t_ILBS per band", paler("ilbs:6"), table.iter().map(|r| (r.first, r.last, r.t_ilbs))),
        ],
    });

    let mut lfs_ulfs = Chart::new(
        format!("Figure {f_lfs} — {}: LFS vs ULFS, 32 threads per block", w.title()),
        "blocks (N)",
        time_axis(w),
    );
    lfs_ulfs.series = vec![measured(data, e, w, b, Barrier::Lfs), measured(data, e, w, b, Barrier::Ulfs)];
    if let (Some(jump), Some(lfs)) = (paper::ulfs_jump(w), data.median(e, w, b, b, Barrier::Lfs)) {
        lfs_ulfs.series.push(Series {
            name: format!("paper: ULFS(33) = LFS(32) {:+.1}%", jump * 100.0),
            color: PAPER_COLOR,
            style: Style::Points,
            points: vec![Point::at(f64::from(b + 1), lfs * (1.0 + jump))],
        });
    }
    lfs_ulfs.markers.push(Marker { x: f64::from(b) + 0.5, label: "block size".into() });

    let mut ilbs_ulfs = Chart::new(
        format!("Figure {f_ulfs} — {}: ILBS vs ULFS, 32 threads per block", w.title()),
        "blocks (N)",
        time_axis(w),
    );
    ilbs_ulfs.series = vec![measured(data, e, w, b, six), measured(data, e, w, b, Barrier::Ulfs)];
    ilbs_ulfs.secondary = Some(SecondaryAxis {
        label: paper_axis,
        series: vec![paper_steps(
            "paper: t_ILBS per band",
            paler("ilbs:6"),
            table.iter().map(|r| (r.first, r.last, r.t_ilbs)),
        )],
    });
    ilbs_ulfs.markers.push(Marker { x: f64::from(b) + 0.5, label: "block size".into() });

    vec![
        Figure { stem: format!("fig{f_lbs:02}_{short}_lbs_ilbs"), chart: lbs_ilbs },
        Figure { stem: format!("fig{f_lfs:02}_{short}_lfs_ulfs"), chart: lfs_ulfs },
        Figure { stem: format!("fig{f_ulfs:02}_{short}_ilbs_ulfs"), chart: ilbs_ulfs },
    ]
}

/// Our ILBS-over-LBS speedup per band against the paper's (Tables 4–5).
fn speedup_bands(data: &Dataset) -> Figure {
    let mut chart = Chart::new(
        "Tables 4–5 — ILBS speedup over LBS per band of grid sizes",
        "blocks (band middle)",
        "t_LBS / t_ILBS",
    );
    let colors = [(Workload::SmithWaterman, (31, 119, 180)), (Workload::Bitonic, (214, 39, 40))];
    for (w, color) in colors {
        let rows = analysis::band_rows(data, w);
        let middle = |r: &analysis::BandRow| f64::from(r.paper.first + r.paper.last) / 2.0;
        let ours: Vec<Point> = rows
            .iter()
            .filter_map(|r| {
                let (low, high) = r.per_grid?;
                Some(Point { x: middle(r), y: r.speedup?, low: Some(low), high: Some(high) })
            })
            .collect();
        let theirs: Vec<Point> = rows.iter().map(|r| Point::at(middle(r), r.paper.speedup)).collect();
        if !ours.is_empty() {
            chart.series.push(Series {
                name: format!("{}: measured (6 groups)", w.title()),
                color,
                style: Style::Line,
                points: ours,
            });
            chart.series.push(Series {
                name: format!("{}: paper", w.title()),
                color,
                style: Style::Dashed,
                points: theirs,
            });
        }
    }
    if chart.has_data() {
        let even = vec![Point::at(7.0, 1.0), Point::at(60.0, 1.0)];
        chart.series.push(Series { name: "no speedup".into(), color: PAPER_COLOR, style: Style::Dashed, points: even });
    }
    Figure { stem: "tables4_5_speedup".into(), chart }
}

/// Every barrier in the paper's setting.
fn all_barriers(data: &Dataset, w: Workload) -> Figure {
    let e = Experiment::Paper;
    let b = paper::BLOCK_SIZE;
    let title = format!("{}: every barrier, 32 threads per block", w.title());
    let mut chart = Chart::new(title, "blocks (N)", time_axis(w));
    chart.series = data.barriers(e, w, b).into_iter().map(|barrier| measured(data, e, w, b, barrier)).collect();
    Figure { stem: format!("paper_all_{}", w.short()), chart }
}

/// One ILBS group sweep.
fn group_sweep(w: Workload, sweep: &analysis::GroupSweep) -> Figure {
    let title = format!("{}: ILBS groups on {} blocks of 32 threads", w.title(), sweep.blocks);
    let mut chart = Chart::new(title, "groups", time_axis(w));
    chart.log_x = sweep.blocks > 64;
    let points = sweep
        .points
        .iter()
        .map(|(g, s)| Point { x: f64::from(*g), y: s.median, low: Some(s.min), high: Some(s.max) })
        .collect();
    chart.series.push(Series { name: "ilbs:G".into(), color: barrier_color("ilbs:6"), style: Style::Line, points });
    chart.markers.push(Marker { x: f64::from(sweep.root), label: format!("√N ≈ {}", sweep.root) });
    Figure { stem: format!("groups_{}_n{}", w.short(), sweep.blocks), chart }
}

/// ULFS and LBS around multiples of the block size.
fn multiples(data: &Dataset, w: Workload) -> Figure {
    let e = Experiment::Multiples;
    let b = paper::BLOCK_SIZE;
    let mut chart =
        Chart::new(format!("{}: around multiples of the block size (32)", w.title()), "blocks (N)", time_axis(w));
    chart.log_x = true;
    chart.series = vec![measured(data, e, w, b, Barrier::Ulfs), measured(data, e, w, b, Barrier::Lbs)];
    for n in data.grids(e, w, b).into_iter().filter(|n| n % b == 0) {
        chart.markers.push(Marker { x: f64::from(n) + 0.5, label: format!("{}·B", n / b) });
    }
    Figure { stem: format!("multiples_{}", w.short()), chart }
}

/// Every barrier at one block size, up to the co-resident grid.
fn extended(data: &Dataset, w: Workload, threads: u32) -> Figure {
    let e = Experiment::Extended;
    let title = format!("{}: {threads} threads per block, up to the co-resident grid", w.title());
    let mut chart = Chart::new(title, "blocks (N, log scale)", time_axis(w));
    chart.log_x = true;
    chart.series =
        data.barriers(e, w, threads).into_iter().map(|barrier| measured(data, e, w, threads, barrier)).collect();
    Figure { stem: format!("ext_{}_t{threads}", w.short()), chart }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::tests::uniform_speedup;

    #[test]
    fn the_paper_figures_carry_the_papers_numbers() {
        let data = Dataset::from_runs(&uniform_speedup(Workload::SmithWaterman, 1.5));
        let figures = all(&data);
        let stems: Vec<&str> = figures.iter().map(|f| f.stem.as_str()).collect();
        assert!(stems.contains(&"fig07_sw_lbs_ilbs") && stems.contains(&"tables4_5_speedup"), "{stems:?}");
        assert!(!stems.contains(&"fig08_bitonic_lbs_ilbs"), "no bitonic data, no bitonic figure: {stems:?}");
        let fig7 = &figures.iter().find(|f| f.stem == "fig07_sw_lbs_ilbs").expect("figure 7").chart;
        let paper = &fig7.secondary.as_ref().expect("the paper's axis").series[0];
        assert_eq!(paper.points[0], Point::at(7.0, 38.11));
        assert_eq!(paper.points.len(), 12, "two points per band");
        assert_eq!(fig7.series[0].points.len(), 54);
    }
}
