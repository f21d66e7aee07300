//! The workspace's manifests, as `cargo metadata` reads them: every crate inherits the
//! workspace's minimum Rust version (so that cargo refuses, with a clear message, to build it
//! on an older toolchain), no locked dependency needs a newer Rust, and every crate meant for
//! crates.io carries what publishing needs.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

/// `cargo metadata` of the workspace for this machine's platform, from the lock file and the
/// downloaded crates alone.
fn metadata() -> Value {
    let cargo = env!("CARGO");
    let version = Command::new(cargo).arg("-vV").output().expect("run cargo -vV");
    let version = String::from_utf8_lossy(&version.stdout).into_owned();
    let host = version.lines().find_map(|l| l.strip_prefix("host: ")).expect("cargo -vV names the host");
    let output = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--locked", "--offline", "--filter-platform", host])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run cargo metadata");
    assert!(output.status.success(), "cargo metadata: {}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).expect("cargo metadata writes JSON")
}

/// `"1.88"` or `"1.88.0"` as numbers, to compare.
fn version(text: &str) -> Vec<u64> {
    let mut parts: Vec<u64> = text.split('.').map(|p| p.parse().expect("a numeric Rust version")).collect();
    parts.resize(3, 0);
    parts
}

/// The `rust-version` of the root manifest's `[workspace.package]`.
fn workspace_rust_version(root: &Path) -> String {
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).expect("read the root manifest");
    let mut section = "";
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            section = line;
        } else if section == "[workspace.package]" {
            if let Some(value) = line.strip_prefix("rust-version") {
                let value = value.trim_start().strip_prefix('=').expect("rust-version = \"…\"");
                return value.trim().trim_matches('"').to_owned();
            }
        }
    }
    panic!("the root manifest's [workspace.package] declares no rust-version")
}

fn workspace_members(metadata: &Value) -> Vec<&Value> {
    let members = metadata["workspace_members"].as_array().expect("workspace_members");
    let packages = metadata["packages"].as_array().expect("packages");
    packages.iter().filter(|p| members.contains(&p["id"])).collect()
}

#[test]
fn every_crate_inherits_the_workspace_rust_version_and_no_dependency_needs_a_newer_one() {
    let metadata = metadata();
    let root = Path::new(metadata["workspace_root"].as_str().expect("workspace_root"));
    let msrv = workspace_rust_version(root);
    let members = workspace_members(&metadata);
    assert!(members.len() >= 4, "{} workspace members", members.len());
    for member in &members {
        let name = member["name"].as_str().expect("name");
        let manifest = std::fs::read_to_string(member["manifest_path"].as_str().expect("manifest_path"))
            .expect("read a member's manifest");
        assert!(
            manifest.lines().any(|l| l.trim() == "rust-version.workspace = true"),
            "{name}'s manifest does not say `rust-version.workspace = true`"
        );
        assert_eq!(member["rust_version"].as_str(), Some(msrv.as_str()), "{name}'s rust-version");
    }
    for package in metadata["packages"].as_array().expect("packages") {
        if let Some(needs) = package["rust_version"].as_str() {
            assert!(
                version(needs) <= version(&msrv),
                "{} {} needs Rust {needs}, newer than the workspace's {msrv}: raise rust-version (and say \
                 why beside it) or lock an older version",
                package["name"].as_str().unwrap_or("?"),
                package["version"].as_str().unwrap_or("?"),
            );
        }
    }
}

#[test]
fn every_published_crate_carries_what_crates_io_and_docs_rs_need() {
    let metadata = metadata();
    let members = workspace_members(&metadata);
    // `publish = false` reads as an empty list of registries.
    let published: Vec<&Value> = members.iter().copied().filter(|m| m["publish"].as_array().is_none()).collect();
    let mut names: Vec<&str> = published.iter().map(|m| m["name"].as_str().expect("name")).collect();
    names.sort_unstable();
    assert_eq!(names, ["gsync", "gsync-contract", "gsync-macros", "gsync-runtime"], "the crates meant for crates.io");
    for member in published {
        let name = member["name"].as_str().expect("name");
        let dir = Path::new(member["manifest_path"].as_str().expect("manifest_path")).parent().expect("a directory");
        for field in ["description", "license", "repository", "readme"] {
            assert!(member[field].as_str().is_some_and(|v| !v.is_empty()), "{name} has no {field}");
        }
        for field in ["keywords", "categories"] {
            assert!(member[field].as_array().is_some_and(|v| !v.is_empty()), "{name} has no {field}");
        }
        assert_eq!(member["license"], "MIT OR Apache-2.0", "{name}'s licence");
        let readme = member["readme"].as_str().expect("readme");
        assert!(dir.join(readme).is_file(), "{name}'s readme {readme} is not in its directory");
        for licence in ["LICENSE-MIT", "LICENSE-APACHE"] {
            assert!(dir.join(licence).is_file(), "{name} has no {licence} in its directory");
        }
        for dependency in member["dependencies"].as_array().expect("dependencies") {
            let is_dev = dependency["kind"] == "dev";
            if dependency["path"].is_string() && !is_dev {
                let dep = dependency["name"].as_str().expect("name");
                assert_ne!(dependency["req"], "*", "{name}'s path dependency {dep} carries no version");
                assert!(names.contains(&dep), "{name} depends on {dep}, which is not published");
            }
        }
    }
}
