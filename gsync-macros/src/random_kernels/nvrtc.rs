//! Compiling the CUDA of many expanded kernels with NVRTC, the way
//! `gsync-runtime` does (`KernelSpec::source` and `compile`), batched into a
//! few translation units so that hundreds of kernels take seconds.

use gsync_runtime::__private::{Axes, SplitSpec};
use gsync_runtime::{Barrier, KernelSpec};

/// The CUDA one expansion carries, read back from its `KERNEL` static.
pub struct Sources {
    symbol: String,
    checked: String,
    unchecked: String,
    /// The split version's bodies and segment symbols, when the kernel splits.
    split: Option<(String, String, Vec<String>)>,
}

impl Sources {
    /// Reads the `KernelSpec` literal of an expansion.
    pub fn from_expansion(file: &syn::File) -> Result<Sources, String> {
        let spec = file
            .items
            .iter()
            .find_map(|item| match item {
                syn::Item::Mod(m) => m.content.as_ref()?.1.iter().find_map(|item| match item {
                    syn::Item::Static(s) if s.ident == "KERNEL" => Some(&*s.expr),
                    _ => None,
                }),
                _ => None,
            })
            .ok_or("the expansion has no `KERNEL` static")?;
        let field = |e: &syn::Expr, name: &str| -> Result<syn::Expr, String> {
            let syn::Expr::Struct(s) = e else { return Err(format!("`{name}`'s struct is not a literal")) };
            s.fields
                .iter()
                .find(|f| matches!(&f.member, syn::Member::Named(i) if i == name))
                .map(|f| f.expr.clone())
                .ok_or(format!("no field `{name}`"))
        };
        let text = |e: syn::Expr| -> Result<String, String> {
            match e {
                syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) => Ok(s.value()),
                other => Err(format!("not a string literal: {}", quote::quote!(#other))),
            }
        };
        let split = field(spec, "split")?;
        let split_error = field(&split, "error")?;
        let splits = quote::quote!(#split_error).to_string().ends_with("None");
        let segments = match field(&split, "segments")? {
            syn::Expr::Reference(r) => match *r.expr {
                syn::Expr::Array(a) => a.elems.into_iter().map(text).collect::<Result<Vec<_>, _>>()?,
                _ => return Err("`segments` is not an array".into()),
            },
            _ => return Err("`segments` is not a reference".into()),
        };
        Ok(Sources {
            symbol: text(field(spec, "symbol")?)?,
            checked: text(field(spec, "checked_body")?)?,
            unchecked: text(field(spec, "unchecked_body")?)?,
            split: match splits {
                true => {
                    Some((text(field(&split, "checked_body")?)?, text(field(&split, "unchecked_body")?)?, segments))
                }
                false => None,
            },
        })
    }

    /// The body and the C symbols of one of the four versions.
    fn version(&self, v: Version) -> Option<(&str, Vec<&str>)> {
        let fused = || vec![self.symbol.as_str()];
        match v {
            Version::FusedChecked => Some((&self.checked, fused())),
            Version::FusedUnchecked => Some((&self.unchecked, fused())),
            Version::SplitChecked => {
                self.split.as_ref().map(|(c, _, s)| (c.as_str(), s.iter().map(|s| s.as_str()).collect()))
            }
            Version::SplitUnchecked => {
                self.split.as_ref().map(|(_, u, s)| (u.as_str(), s.iter().map(|s| s.as_str()).collect()))
            }
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum Version {
    FusedChecked,
    FusedUnchecked,
    SplitChecked,
    SplitUnchecked,
}

const VERSIONS: [Version; 4] =
    [Version::FusedChecked, Version::FusedUnchecked, Version::SplitChecked, Version::SplitUnchecked];
const ARCHS: [(u32, u32); 2] = [(8, 0), (9, 0)];
/// Kernels per translation unit.
const BATCH: usize = 60;

/// Whether NVRTC can be loaded; with `GSYNC_REQUIRE_NVRTC=1` it must.
pub fn available() -> bool {
    gsync_runtime::__private::nvrtc_or_skip()
}

/// One translation unit to compile: a version of some kernels for an architecture.
struct Job {
    version: Version,
    arch: (u32, u32),
    kernels: Vec<usize>,
}

/// The kernels NVRTC rejects, by index, with its log.
pub fn failures(kernels: &[&Sources]) -> Vec<(usize, String)> {
    let mut jobs = Vec::new();
    for version in VERSIONS {
        // Kernels whose symbols differ share a translation unit.
        let mut batches: Vec<(std::collections::HashSet<&str>, Vec<usize>)> = Vec::new();
        for (i, k) in kernels.iter().enumerate() {
            let Some((_, symbols)) = k.version(version) else { continue };
            let batch = batches
                .iter_mut()
                .find(|(taken, members)| members.len() < BATCH && symbols.iter().all(|s| !taken.contains(s)));
            match batch {
                Some((taken, members)) => {
                    taken.extend(symbols);
                    members.push(i);
                }
                None => batches.push((symbols.into_iter().collect(), vec![i])),
            }
        }
        for (_, members) in batches {
            for arch in ARCHS {
                jobs.push(Job { version, arch, kernels: members.clone() });
            }
        }
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                scope.spawn(|| {
                    let mut failed = Vec::new();
                    while let Some(job) = jobs.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed)) {
                        failed.extend(run_job(kernels, job));
                    }
                    failed
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().expect("compiler thread")).collect()
    })
}

/// Compiles a job; on failure, each of its kernels alone, to name the culprits.
fn run_job(kernels: &[&Sources], job: &Job) -> Vec<(usize, String)> {
    let body: String = job
        .kernels
        .iter()
        .filter_map(|&i| kernels[i].version(job.version))
        .map(|(b, _)| b)
        .collect::<Vec<_>>()
        .join("\n");
    let Err(batch_log) = compile(body, job) else { return Vec::new() };
    let mut failed = Vec::new();
    for &i in &job.kernels {
        let Some((body, _)) = kernels[i].version(job.version) else { continue };
        if let Err(log) = compile(body.to_string(), job) {
            failed.push((i, format!("{:?} for sm_{}{}: {log}", job.version, job.arch.0, job.arch.1)));
        }
    }
    if failed.is_empty() {
        failed.push((job.kernels[0], format!("kernels that compile alone fail together: {batch_log}")));
    }
    failed
}

fn compile(body: String, job: &Job) -> Result<(), String> {
    let body: &'static str = Box::leak(body.into_boxed_str());
    let checked = matches!(job.version, Version::FusedChecked | Version::SplitChecked);
    let split = matches!(job.version, Version::SplitChecked | Version::SplitUnchecked);
    let spec = KernelSpec {
        name: "random_kernels",
        symbol: "random_kernels",
        rust_signature: "random kernels",
        checked_body: body,
        unchecked_body: body,
        bounds_checks: checked,
        profile: false,
        arrays: &[],
        grid_syncs: 1,
        default_threads: 0,
        blocks_per_sm: 0,
        split: SplitSpec { checked_body: body, unchecked_body: body, segments: &[], error: None, reads_device: false },
        assertions: &[],
        axes: Axes::NONE,
        refused_block_sizes: &[],
    };
    // A software barrier: the kernels' code is the same under every barrier, and this one
    // needs none of the CUDA headers that make cooperative groups slow to compile.
    let barrier = if split { Barrier::MultiLaunch } else { Barrier::Lbs };
    gsync_runtime::compile(&spec.source(barrier, 256), "random_kernels", job.arch).map(|_| ()).map_err(|e| {
        // NVRTC's log, then the kernel's own CUDA without the prelude.
        let message = e.to_string();
        let log = message.split("--- CUDA source ---").next().unwrap_or_default();
        format!("{}\n{body}", log.trim_end())
    })
}
