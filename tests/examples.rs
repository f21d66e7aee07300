//! The examples run end to end — on the CPU emulator where there is no GPU —
//! at small sizes, and verify their own output.

use gsync::Barrier;
use std::path::PathBuf;
use std::process::Command;

/// The example binary `cargo test` built next to this test's binary.
fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let profile_dir = exe.parent().and_then(|deps| deps.parent()).expect("target/<profile>/deps");
    let path = profile_dir.join("examples").join(name);
    assert!(path.exists(), "{} was not built; `cargo test` builds the examples", path.display());
    path
}

fn run(name: &str, args: &[&str]) -> String {
    let output = Command::new(example(name)).args(args).output().expect("the example runs");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{name} {args:?} failed:\n{stdout}\n{stderr}");
    stdout
}

#[test]
fn the_smoothing_example_verifies_its_result() {
    for barrier in ["cooperative", "lbs", "multi-launch"] {
        let out = run("smooth", &["--n", "3000", "--rounds", "25", "--reps", "1", "--barrier", barrier]);
        assert!(out.contains("verified: all 3000 elements match the CPU bit for bit"), "{out}");
    }
}

#[test]
fn the_smoothing_example_prints_its_cuda() {
    let out = run("smooth", &["--print-cuda"]);
    assert!(out.contains("extern \"C\" __global__ void __launch_bounds__(GSYNC_LAUNCH_BOUNDS) smooth_("), "{out}");
}

#[test]
fn the_profile_example_writes_a_chrome_trace_and_a_plot() {
    let dir = std::env::temp_dir().join(format!("gsync-profile-example-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let (trace, svg) = (dir.join("smooth.json"), dir.join("smooth.svg"));
    let args = ["--n", "3000", "--rounds", "12", "--blocks", "3", "--threads", "64", "--barrier", "lbs"];
    let files = ["--trace", trace.to_str().expect("a UTF-8 path"), "--svg", svg.to_str().expect("a UTF-8 path")];
    let out = run("profile", &[&args[..], &files[..]].concat());
    assert!(out.contains("verified: 3000 elements"), "{out}");
    assert!(out.contains("3 blocks, 12 grid_sync() calls, 13 phases recorded"), "{out}");
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&trace).expect("the trace")).expect("the trace is JSON");
    let events = json["traceEvents"].as_array().expect("trace events");
    // Per block: 13 phases of work and 12 barriers.
    assert_eq!(events.iter().filter(|event| event["ph"] == "X").count(), 3 * (13 + 12));
    let plot = std::fs::read_to_string(&svg).expect("the plot");
    assert!(plot.starts_with("<svg") && plot.contains("smooth on 3 blocks, lbs barrier: 13 phases"), "{plot}");
    // A capacity below the rounds truncates the profile and says so.
    let out = run("profile", &[&args[..], &["--phases", "4"]].concat());
    assert!(out.contains("4 phases recorded (truncated at 4 per block)"), "{out}");
    std::fs::remove_dir_all(&dir).expect("the temporary directory goes");
}

#[test]
fn the_bitonic_example_verifies_its_sort() {
    // Six blocks, so that ILBS with the paper's 6 groups runs too: every barrier, Auto, and ILBS:6.
    let out = run("bitonic", &["--n", "3001", "--reps", "1", "--barrier", "all", "--blocks", "6"]);
    assert_eq!(out.matches("| yes |").count(), Barrier::ALL.len() + 1, "every barrier verified:\n{out}");
    // With fewer blocks than groups, ILBS:6 is reported as refused, not a failure.
    let out = run("bitonic", &["--n", "3001", "--reps", "1", "--barrier", "ilbs:6", "--blocks", "4"]);
    assert!(out.contains("| ilbs:6 | – | – | (kernel `sort_keys` cannot use barrier `ilbs:6`"), "{out}");
    let out = run("bitonic", &["--n", "999", "--reps", "1", "--type", "f32", "--descending", "--values"]);
    assert!(out.contains("| yes |"), "{out}");
    // Several barriers, separated by commas: one verified row each.
    let out = run("bitonic", &["--n", "999", "--reps", "1", "--barrier", "lbs,multi-launch"]);
    assert!(out.contains("| lbs |") && out.contains("| multi-launch |"), "{out}");
    assert_eq!(out.matches("| yes |").count(), 2, "{out}");
}

#[test]
fn the_scan_example_verifies_every_scan() {
    let out = run("scan", &["--n", "20001", "--reps", "1"]);
    assert_eq!(out.matches("| yes |").count(), 4, "single pass, three phases fused, split, as a graph:\n{out}");
    assert!(out.contains("decoupled look-back"), "{out}");
}

#[test]
fn the_radix_sort_example_verifies_keys_and_pairs() {
    let out = run("radix_sort", &["--n", "9001", "--reps", "1", "--kernel", "radix"]);
    assert_eq!(out.matches("| yes |").count(), 2, "keys and pairs:\n{out}");
    assert!(out.contains("| 9001 | u32 | radix |"), "{out}");
    // The split form, one launch per phase on the stream and replayed as a graph, beside the
    // fused kernel.
    let out = run("radix_sort", &["--n", "9001", "--reps", "1", "--kernel", "radix", "--barrier", "auto,multi-launch"]);
    assert_eq!(out.matches("| yes |").count(), 6, "keys and pairs, fused, split and split graph:\n{out}");
    assert!(out.contains("| multi-launch |") && out.contains("| multi-launch, graph |"), "{out}");
}

#[test]
fn the_smith_waterman_example_verifies_its_alignment() {
    let out = run("smith_waterman", &["--lengths", "150", "333", "--reps", "1"]);
    assert!(out.contains("| yes |"), "{out}");
}

#[test]
fn the_fusion_table_has_a_verified_row_per_workload() {
    let out = run("fusion", &["--reps", "1"]);
    for workload in [
        "smooth 2^10",
        "heat global 32²",
        "heat resident 32²",
        "empty phases",
        "bitonic 2^12",
        "bitonic pairs 2^12",
        "scan three phases 2^14",
        "scan single pass 2^14",
        "smith-waterman 2^8",
        "smith-waterman stripes 2^8",
    ] {
        let row = out.lines().find(|line| line.starts_with(&format!("| {workload}")));
        let row = row.unwrap_or_else(|| panic!("no row for {workload}:\n{out}"));
        assert_eq!(row.matches('|').count(), 7, "six cells: {row}");
        assert!(row.contains("µs") || row.contains("ms"), "{row}");
    }
}

/// The sweep, and the second timing of its winner beside the default, run only on a GPU unless
/// asked for: this asks, on the cheapest workload.
#[test]
fn the_fusion_sweep_times_its_winner_beside_the_default() {
    let out = run("fusion", &["--workload", "empty-phases", "--reps", "1", "--sweep-reps", "1", "--sweep"]);
    let row = out.lines().find(|line| line.starts_with("| empty phases"));
    let row = row.unwrap_or_else(|| panic!("no row:\n{out}"));
    let cells: Vec<&str> = row.split('|').map(str::trim).collect();
    assert_eq!(cells.len(), 8, "six cells: {row}");
    // A time in µs, or in ms on a loaded machine.
    let timed = cells[3].contains("µs") || cells[3].contains("ms");
    assert!(cells[3].contains(" × ") && timed, "the best shape and its time: {row}");
}

#[test]
fn the_heat_example_verifies_every_variant() {
    let out = run("heat", &["--n", "37", "--steps", "7", "--reps", "1"]);
    for variant in [
        "| global, fused default |",
        "| global, fused best shape |",
        "| global, split stream |",
        "| global, split graph |",
        "| resident, fused default |",
        "| resident columns, best |",
        "| resident strips, best |",
        "| columns, every step |",
        "| columns, every 4 steps |",
    ] {
        assert_eq!(out.matches(variant).count(), 1, "{variant}:\n{out}");
    }
    assert!(out.contains("verified: every run matches the CPU reference bit for bit (1369 cells)"), "{out}");
}

#[test]
fn the_cudarc_interop_example_verifies_its_result() {
    let out = run("cudarc_interop", &["--n", "3000", "--rounds", "9"]);
    assert!(out.contains("verified: all 3000 elements match the CPU bit for bit"), "{out}");
}
