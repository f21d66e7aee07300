//! `runs.csv` (one row per launch) and `meta.csv` (the machine and the
//! settings, as key–value pairs): written after a run, read back by `render`.

use std::path::Path;

use gsync::Barrier;

use crate::error::{BenchError, Result};
use crate::model::{Experiment, Run, Status, Workload};

/// The columns of `runs.csv`, in order.
pub const COLUMNS: [&str; 12] = [
    "experiment",
    "workload",
    "problem",
    "phases",
    "threads",
    "blocks",
    "barrier",
    "groups",
    "rep",
    "status",
    "time_us",
    "detail",
];

/// What each column of `runs.csv` holds, for the report.
pub const COLUMN_DOCS: [(&str, &str); 12] = [
    ("experiment", "paper, groups, multiples or extended"),
    ("workload", "bitonic, smith-waterman or empty-phases"),
    ("problem", "the input size and tiling"),
    ("phases", "grid_sync() calls the launch crosses"),
    ("threads", "threads per block"),
    ("blocks", "blocks in the grid"),
    ("barrier", "cooperative, lbs, lfs, ilbs (round(√N) groups), ilbs:G, ulfs, multi-launch"),
    ("groups", "ILBS group count as launched (empty for other barriers)"),
    ("rep", "0 = warm-up (verified, not used), 1… = timed repetitions"),
    ("status", "ok (verified against the CPU reference), wrong, refused or error"),
    ("time_us", "CUDA-event kernel time in µs (LaunchReport::gpu_time); only when ok"),
    ("detail", "why a run was wrong, refused or failed"),
];

/// Writes `runs` to `path` as CSV with a header row.
pub fn write_runs(path: &Path, runs: &[Run]) -> Result<()> {
    let mut writer = csv::Writer::from_path(path).map_err(BenchError::csv(path))?;
    writer.write_record(COLUMNS).map_err(BenchError::csv(path))?;
    for run in runs {
        writer.write_record(fields(run)).map_err(BenchError::csv(path))?;
    }
    writer.flush().map_err(BenchError::io(path))
}

/// A run's fields, in [`COLUMNS`] order.
fn fields(run: &Run) -> [String; 12] {
    [
        run.experiment.name().to_owned(),
        run.workload.name().to_owned(),
        run.problem.clone(),
        run.phases.to_string(),
        run.threads.to_string(),
        run.blocks.to_string(),
        run.barrier.to_string(),
        run.groups.map(|g| g.to_string()).unwrap_or_default(),
        run.rep.to_string(),
        run.status.name().to_owned(),
        run.time_us.map(|t| format!("{t:.3}")).unwrap_or_default(),
        run.detail.clone(),
    ]
}

/// Reads the runs `write_runs` wrote; any value it would not have written is an error
/// naming the line.
pub fn read_runs(path: &Path) -> Result<Vec<Run>> {
    let mut reader = csv::Reader::from_path(path).map_err(BenchError::csv(path))?;
    let headers = reader.headers().map_err(BenchError::csv(path))?.clone();
    let index: Vec<usize> = COLUMNS
        .iter()
        .map(|&column| {
            headers.iter().position(|h| h == column).ok_or_else(|| BenchError::BadRecord {
                path: path.to_owned(),
                line: 1,
                problem: format!("the header has no `{column}` column"),
            })
        })
        .collect::<Result<_>>()?;
    let mut runs = Vec::new();
    for record in reader.records() {
        let record = record.map_err(BenchError::csv(path))?;
        let line = record.position().map_or(0, |p| p.line());
        let field = |i: usize| record.get(index[i]).unwrap_or("");
        let run =
            parse_run(&field).map_err(|problem| BenchError::BadRecord { path: path.to_owned(), line, problem })?;
        runs.push(run);
    }
    Ok(runs)
}

/// One run from its fields, looked up by column index.
fn parse_run<'a>(field: &dyn Fn(usize) -> &'a str) -> std::result::Result<Run, String> {
    let number = |i: usize| -> std::result::Result<u32, String> {
        field(i).parse::<u32>().map_err(|_| format!("{} `{}` is not a whole number", COLUMNS[i], field(i)))
    };
    let optional_number = |i: usize| -> std::result::Result<Option<u32>, String> {
        if field(i).is_empty() {
            Ok(None)
        } else {
            number(i).map(Some)
        }
    };
    let time_us = match field(10) {
        "" => None,
        text => Some(
            text.parse::<f64>()
                .ok()
                .filter(|t| t.is_finite())
                .ok_or_else(|| format!("time_us `{text}` is not a number"))?,
        ),
    };
    let status: Status = field(9).parse()?;
    if (status == Status::Ok) != time_us.is_some() {
        return Err(format!("status {} with time_us `{}`: only ok runs have a time", status.name(), field(10)));
    }
    Ok(Run {
        experiment: field(0).parse::<Experiment>()?,
        workload: field(1).parse::<Workload>()?,
        problem: field(2).to_owned(),
        phases: number(3)?,
        threads: number(4)?,
        blocks: number(5)?,
        barrier: field(6).parse::<Barrier>().map_err(|e| e.to_string())?,
        groups: optional_number(7)?,
        rep: number(8)?,
        status,
        time_us,
        detail: field(11).to_owned(),
    })
}

/// Key–value facts about a run: the machine, the date, the settings.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Meta {
    entries: Vec<(String, String)>,
}

impl Meta {
    /// Adds (or replaces) `key`.
    pub fn set(&mut self, key: &str, value: impl Into<String>) {
        let value = value.into();
        match self.entries.iter_mut().find(|(k, _)| k == key) {
            Some(entry) => entry.1 = value,
            None => self.entries.push((key.to_owned(), value)),
        }
    }

    /// The value of `key`, if recorded.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.entries.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    /// The value of `key`, or "not recorded".
    pub fn show(&self, key: &str) -> &str {
        self.get(key).unwrap_or("not recorded")
    }

    /// Every entry, in insertion order.
    pub fn entries(&self) -> &[(String, String)] {
        &self.entries
    }
}

/// Writes `meta` as a two-column CSV (`key,value`).
pub fn write_meta(path: &Path, meta: &Meta) -> Result<()> {
    let mut writer = csv::Writer::from_path(path).map_err(BenchError::csv(path))?;
    writer.write_record(["key", "value"]).map_err(BenchError::csv(path))?;
    for (key, value) in meta.entries() {
        writer.write_record([key, value]).map_err(BenchError::csv(path))?;
    }
    writer.flush().map_err(BenchError::io(path))
}

/// Reads what [`write_meta`] wrote; a missing file is an empty `Meta`.
pub fn read_meta(path: &Path) -> Result<Meta> {
    let mut meta = Meta::default();
    if !path.exists() {
        return Ok(meta);
    }
    let mut reader = csv::Reader::from_path(path).map_err(BenchError::csv(path))?;
    for record in reader.records() {
        let record = record.map_err(BenchError::csv(path))?;
        match (record.get(0), record.get(1)) {
            (Some(key), Some(value)) => meta.set(key, value),
            _ => {
                let line = record.position().map_or(0, |p| p.line());
                let problem = "expected two fields, key and value".to_owned();
                return Err(BenchError::BadRecord { path: path.to_owned(), line, problem });
            }
        }
    }
    Ok(meta)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample_runs() -> Vec<Run> {
        let base = Run {
            experiment: Experiment::Paper,
            workload: Workload::SmithWaterman,
            problem: "m=7680 n=1920 tile_cols=32".into(),
            phases: 120,
            threads: 32,
            blocks: 33,
            barrier: Barrier::Ilbs { groups: Some(6) },
            groups: Some(6),
            rep: 1,
            status: Status::Ok,
            time_us: Some(1234.567),
            detail: String::new(),
        };
        vec![
            base.clone(),
            Run { barrier: Barrier::Ilbs { groups: None }, rep: 0, ..base.clone() },
            Run {
                barrier: Barrier::Lfs,
                groups: None,
                status: Status::Refused,
                time_us: None,
                detail: "lfs supports at most 32 blocks, \"quoted\", and a comma".into(),
                ..base.clone()
            },
            Run {
                experiment: Experiment::Extended,
                workload: Workload::EmptyPhases,
                barrier: Barrier::MultiLaunch,
                groups: None,
                status: Status::Wrong,
                time_us: None,
                detail: "marker 3, expected 499\nsecond line".into(),
                ..base
            },
        ]
    }

    #[test]
    fn runs_survive_a_round_trip_through_csv() {
        let dir = std::env::temp_dir().join(format!("gsync-bench-csv-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let path = dir.join("runs.csv");
        let runs = sample_runs();
        write_runs(&path, &runs).expect("write");
        let back = read_runs(&path).expect("read");
        assert_eq!(back, runs);
        let text = std::fs::read_to_string(&path).expect("text");
        assert!(text.starts_with("experiment,workload,problem,phases,"), "{text}");
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn a_bad_value_names_its_line_and_column() {
        let dir = std::env::temp_dir().join(format!("gsync-bench-bad-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let path = dir.join("runs.csv");
        write_runs(&path, &sample_runs()).expect("write");
        let text = std::fs::read_to_string(&path).expect("text").replacen(",33,", ",many,", 1);
        std::fs::write(&path, text).expect("rewrite");
        let error = read_runs(&path).expect_err("blocks is not a number");
        let message = error.to_string();
        assert!(message.contains("line 2") && message.contains("blocks `many`"), "{message}");
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn a_time_on_a_run_that_was_not_ok_is_refused() {
        let fields = ["paper", "bitonic", "n=8", "3", "32", "7", "lbs", "", "1", "wrong", "5.0", "bad"];
        let error = parse_run(&|i| fields[i]).expect_err("a wrong run has no time");
        assert!(error.contains("only ok runs have a time"), "{error}");
        let fields = ["paper", "bitonic", "n=8", "3", "32", "7", "lbs", "", "1", "ok", "5.0", ""];
        assert_eq!(parse_run(&|i| fields[i]).map(|r| r.time_us), Ok(Some(5.0)));
    }

    #[test]
    fn meta_round_trips_and_a_missing_file_is_empty() {
        let dir = std::env::temp_dir().join(format!("gsync-bench-meta-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let path = dir.join("meta.csv");
        assert_eq!(read_meta(&path).expect("missing is fine"), Meta::default());
        let mut meta = Meta::default();
        meta.set("gpu", "NVIDIA H200, 132 SMs");
        meta.set("reps", "7");
        meta.set("reps", "9");
        write_meta(&path, &meta).expect("write");
        let back = read_meta(&path).expect("read");
        assert_eq!(back, meta);
        assert_eq!(back.get("reps"), Some("9"));
        assert_eq!(back.show("driver"), "not recorded");
        std::fs::remove_dir_all(&dir).ok();
    }
}
