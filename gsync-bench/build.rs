//! Records the commit the harness is built from, so that a report names it
//! even when the binary runs on a machine without the repository.

use std::process::Command;

fn main() {
    for watched in ["../.git/HEAD", "../.git/index", "../.git/refs/heads", "../.git/packed-refs"] {
        println!("cargo:rerun-if-changed={watched}");
    }
    let git = |args: &[&str]| {
        let output = Command::new("git").args(args).output().ok()?;
        output.status.success().then(|| String::from_utf8_lossy(&output.stdout).trim().to_owned())
    };
    if let Some(commit) = git(&["rev-parse", "--short=12", "HEAD"]).filter(|c| !c.is_empty()) {
        let dirty = git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
        let suffix = if dirty { " with uncommitted changes" } else { "" };
        println!("cargo:rustc-env=GSYNC_BENCH_COMMIT={commit}{suffix}");
    }
}
