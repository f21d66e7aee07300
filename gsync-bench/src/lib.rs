//! # gsync-bench
//!
//! Replicates the experiments of Savadi, Salavatizadeh and Riahi, "Improving
//! the inter-block synchronization methods in CUDA", with gsync's barriers:
//! runs Smith-Waterman, bitonic sort and empty phases under every barrier,
//! verifies every run against a CPU reference, writes the raw runs as CSV, and
//! renders a Markdown report with the paper's Tables 4–5 side by side, verdicts
//! and a choice of barrier computed from the data, and SVG/PNG plots of Figures 7–12.
//!
//! ```text
//! gsync-bench replicate --out results            # on a GPU machine
//! gsync-bench replicate --out results --quick    # seconds, on the CPU emulator
//! gsync-bench render --out results               # report and plots from results/runs.csv
//! ```
//!
//! The modules, in the order data flows through them: [`cli`] (options) →
//! [`plan`] (what runs) → [`workloads`] and [`runner`] (verified runs) →
//! [`record`] (CSV) → [`analysis`] (summaries, tables) → [`verdict`] (the paper's
//! claims) and [`advice`] (which barrier to use) → [`report`], [`figures`] and
//! [`plots`]. The paper's own numbers live in [`paper`].
//!
//! ```
//! use gsync_bench::stats::Summary;
//! let s = Summary::of(&[3.0, 1.0, 2.0]).expect("three samples");
//! assert_eq!((s.median, s.min, s.max), (2.0, 1.0, 3.0));
//! ```

#![warn(missing_docs)]

pub mod advice;
pub mod analysis;
pub mod cli;
pub mod error;
pub mod figures;
pub mod machine;
pub mod markdown;
pub mod model;
pub mod paper;
pub mod plan;
pub mod plots;
pub mod record;
pub mod report;
pub mod runner;
pub mod stats;
pub mod verdict;
pub mod workloads;
