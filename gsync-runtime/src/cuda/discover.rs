//! Finding the CUDA driver, NVRTC and the CUDA headers on this machine.
//!
//! cudarc loads its libraries by name and panics when one is missing, so every entry point of
//! this crate looks here first and turns a missing library into an [`Error`] that says how to
//! install it.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use libloading::Library;

use crate::core::error::{Error, Result};
use crate::cuda::elf::check_library;

/// Names of the driver library, most specific first.
const DRIVER_NAMES: [&str; 2] = ["libcuda.so.1", "libcuda.so"];

/// Names of the NVRTC library inside a `lib` directory, preferred first.
const NVRTC_NAMES: [&str; 3] = ["libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"];

/// NVRTC loads its builtins library by this name, without a directory.
const BUILTINS_PREFIX: &str = "libnvrtc-builtins.so";

/// The header whose presence marks a directory as the CUDA include directory.
const MARKER_HEADER: &str = "cooperative_groups.h";

/// Where NVRTC and the CUDA headers were found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Toolkit {
    nvrtc_library: PathBuf,
    include_dirs: Vec<PathBuf>,
    header_search: Vec<PathBuf>,
}

impl Toolkit {
    /// The NVRTC shared library that was loaded.
    pub fn nvrtc_library(&self) -> &Path {
        &self.nvrtc_library
    }

    /// The include directories to pass to NVRTC, or an error when no CUDA headers were found.
    pub fn headers(&self) -> Result<&[PathBuf]> {
        if self.include_dirs.is_empty() {
            let header = MARKER_HEADER.to_owned();
            return Err(Error::CudaHeadersNotFound { header, searched: self.header_search.clone() });
        }
        Ok(&self.include_dirs)
    }

    /// The include directories found; empty when there are no CUDA headers.
    pub(crate) fn include_dirs(&self) -> &[PathBuf] {
        &self.include_dirs
    }

    /// The directories searched for the CUDA headers, for messages about a missing one.
    pub(crate) fn header_search(&self) -> &[PathBuf] {
        &self.header_search
    }
}

/// NVRTC and the CUDA headers, found and loaded once per process.
///
/// The search order is: `GSYNC_CUDA_ROOT`, `CUDA_HOME`, `CUDA_PATH`, `/usr/local/cuda`, then
/// NVIDIA's pip wheels in each `PYTHONPATH` entry, in the site-packages of `VIRTUAL_ENV` and
/// `CONDA_PREFIX`, in `~/.local`, and in `/usr/local`. Only success is remembered: after an
/// error, the next call searches again.
///
/// ```
/// match gsync_runtime::toolkit() {
///     Ok(toolkit) => println!("NVRTC: {}", toolkit.nvrtc_library().display()),
///     // What was searched, and what to install.
///     Err(error) => println!("{error}"),
/// }
/// ```
pub fn toolkit() -> Result<&'static Toolkit> {
    static LOADED: OnceLock<(Toolkit, Vec<Library>)> = OnceLock::new();
    if let Some((toolkit, _)) = LOADED.get() {
        return Ok(toolkit);
    }
    let toolkit = SearchEnv::from_process().locate()?;
    let libraries = load_nvrtc(&toolkit.nvrtc_library)?;
    // A racing thread may have stored its own copy; dropping ours only lowers refcounts.
    let (toolkit, _) = LOADED.get_or_init(|| (toolkit, libraries));
    Ok(toolkit)
}

/// Checks that the NVIDIA driver library can be loaded, so that cudarc will not panic.
pub(crate) fn require_driver() -> Result<()> {
    static DRIVER: OnceLock<Library> = OnceLock::new();
    if DRIVER.get().is_some() {
        return Ok(());
    }
    for name in DRIVER_NAMES {
        // SAFETY: libcuda's initialisers have no preconditions; we only keep it loaded.
        if let Ok(library) = unsafe { Library::new(name) } {
            DRIVER.get_or_init(|| library);
            return Ok(());
        }
    }
    Err(Error::DriverNotFound { searched: DRIVER_NAMES.iter().map(|name| name.to_string()).collect() })
}

/// Loads NVRTC and its builtins by absolute path, and makes sure cudarc will bind to this very
/// NVRTC.
///
/// cudarc later calls `dlopen("libnvrtc.so.13")` (among other names), and NVRTC itself calls
/// `dlopen("libnvrtc-builtins.so.13.0")`, both without a directory. The dynamic loader first
/// compares such a name against the sonames of already loaded objects, so while our handles
/// stay open both resolve to the files found here, though their directory is on no search path.
/// (A `libnvrtc.so` on the default search path would still win for cudarc, since that name
/// comes first in its list and matches no loaded soname.) Each file is checked before it is
/// loaded, so that a damaged one is an error, not a crash.
fn load_nvrtc(nvrtc: &Path) -> Result<Vec<Library>> {
    let dir = nvrtc.parent().unwrap_or(Path::new("."));
    let mut paths = builtins_in(dir);
    paths.push(nvrtc.to_owned());
    paths.iter().try_for_each(|path| check_library(path))?;
    let libraries = paths
        .iter()
        .map(|path| {
            // SAFETY: NVRTC's initialisers have no preconditions.
            unsafe { Library::new(path) }
                .map_err(|source| Error::LibraryLoad { path: path.clone(), source: Box::new(source) })
        })
        .collect::<Result<Vec<_>>>()?;
    // SAFETY: only probes names with dlopen; NVRTC is already loaded above.
    if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        return Err(Error::UnsupportedNvrtc { path: nvrtc.to_owned() });
    }
    Ok(libraries)
}

/// The NVRTC builtins libraries in `dir` (one per NVRTC version, normally just one).
fn builtins_in(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut builtins: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok())
        .filter(|entry| entry.file_name().to_string_lossy().starts_with(BUILTINS_PREFIX))
        .map(|entry| entry.path())
        .collect();
    builtins.sort();
    builtins
}

/// One place that may hold NVRTC and its headers.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Candidate {
    /// Directories that may hold the NVRTC library.
    lib_dirs: Vec<PathBuf>,
    /// The include directory; it counts only if it holds [`MARKER_HEADER`].
    include_dir: PathBuf,
    /// Further include directories (CCCL), used when they exist.
    extra_include_dirs: Vec<PathBuf>,
}

impl Candidate {
    /// A CUDA toolkit or a CUDA 13 wheel tree: `lib64/` or `lib/`, and `include/` with `cccl/`.
    fn toolkit_root(root: &Path) -> Self {
        let include_dir = root.join("include");
        Candidate {
            lib_dirs: vec![root.join("lib64"), root.join("lib")],
            extra_include_dirs: vec![include_dir.join("cccl")],
            include_dir,
        }
    }

    /// The CUDA 12 wheels, which unpack each component into its own directory.
    fn cuda12_wheels(site: &Path) -> Self {
        let nvidia = site.join("nvidia");
        Candidate {
            lib_dirs: vec![nvidia.join("cuda_nvrtc").join("lib")],
            include_dir: nvidia.join("cuda_runtime").join("include"),
            extra_include_dirs: vec![nvidia.join("cuda_cccl").join("include")],
        }
    }

    fn nvrtc_library(&self) -> Option<PathBuf> {
        self.lib_dirs
            .iter()
            .flat_map(|dir| NVRTC_NAMES.iter().map(move |name| dir.join(name)))
            .find(|path| path.is_file())
    }

    fn include_dirs(&self) -> Vec<PathBuf> {
        if !self.include_dir.join(MARKER_HEADER).is_file() {
            return Vec::new();
        }
        let extras = self.extra_include_dirs.iter().filter(|dir| dir.is_dir());
        std::iter::once(&self.include_dir).chain(extras).cloned().collect()
    }

    fn header_search(&self) -> Vec<PathBuf> {
        std::iter::once(&self.include_dir).chain(&self.extra_include_dirs).cloned().collect()
    }
}

/// The environment that decides where to search, captured so tests can fabricate it.
#[derive(Clone, Debug, Default)]
pub(crate) struct SearchEnv {
    /// Toolkit roots named by the user or by convention, in order.
    pub toolkit_roots: Vec<PathBuf>,
    /// Directories that are site-packages themselves (`PYTHONPATH` entries).
    pub site_dirs: Vec<PathBuf>,
    /// Prefixes whose `lib/python3*/site-packages` may hold wheels.
    pub python_prefixes: Vec<PathBuf>,
    /// Prefixes whose `lib/python3*/dist-packages` or `site-packages` may hold wheels.
    pub system_python_prefixes: Vec<PathBuf>,
}

impl SearchEnv {
    /// The search order for this process, from its environment variables.
    pub fn from_process() -> Self {
        let var = |name: &str| std::env::var_os(name).filter(|value| !value.is_empty());
        let toolkit_roots = ["GSYNC_CUDA_ROOT", "CUDA_HOME", "CUDA_PATH"]
            .into_iter()
            .filter_map(var)
            .map(PathBuf::from)
            .chain([PathBuf::from("/usr/local/cuda")])
            .collect();
        let site_dirs = var("PYTHONPATH").map(|paths| split_paths(&paths)).unwrap_or_default();
        let home_local = var("HOME").map(|home| Path::new(&home).join(".local"));
        let python_prefixes =
            ["VIRTUAL_ENV", "CONDA_PREFIX"].into_iter().filter_map(var).map(PathBuf::from).chain(home_local).collect();
        SearchEnv {
            toolkit_roots,
            site_dirs,
            python_prefixes,
            system_python_prefixes: vec![PathBuf::from("/usr/local")],
        }
    }

    /// Finds NVRTC in the first candidate that has it, with that candidate's headers.
    pub fn locate(&self) -> Result<Toolkit> {
        let candidates = self.candidates();
        for candidate in &candidates {
            if let Some(nvrtc_library) = candidate.nvrtc_library() {
                return Ok(Toolkit {
                    nvrtc_library,
                    include_dirs: candidate.include_dirs(),
                    header_search: candidate.header_search(),
                });
            }
        }
        Err(Error::NvrtcNotFound {
            searched: candidates.iter().flat_map(|candidate| candidate.lib_dirs.iter().cloned()).collect(),
        })
    }

    fn candidates(&self) -> Vec<Candidate> {
        let toolkits = self.toolkit_roots.iter().map(|root| Candidate::toolkit_root(root));
        let wheels = self.site_packages().into_iter().flat_map(|site| {
            [Candidate::toolkit_root(&site.join("nvidia").join("cu13")), Candidate::cuda12_wheels(&site)]
        });
        toolkits.chain(wheels).collect()
    }

    /// The Python site folders to search: the `PYTHONPATH` entries, then the Python prefixes'.
    pub(crate) fn site_packages(&self) -> Vec<PathBuf> {
        let venvs = self.python_prefixes.iter().flat_map(|prefix| python_dirs(prefix, &["site-packages"]));
        let system = self
            .system_python_prefixes
            .iter()
            .flat_map(|prefix| python_dirs(prefix, &["dist-packages", "site-packages"]));
        self.site_dirs.iter().cloned().chain(venvs).chain(system).collect()
    }
}

fn split_paths(paths: &OsString) -> Vec<PathBuf> {
    std::env::split_paths(paths).filter(|path| !path.as_os_str().is_empty()).collect()
}

/// `<prefix>/lib/python3*/<kind>` for each kind, for the Python versions present.
fn python_dirs(prefix: &Path, kinds: &[&str]) -> Vec<PathBuf> {
    let lib = prefix.join("lib");
    let Ok(entries) = std::fs::read_dir(&lib) else {
        return Vec::new();
    };
    let mut versions: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok())
        .filter(|entry| entry.file_name().to_string_lossy().starts_with("python3"))
        .map(|entry| entry.path())
        .collect();
    versions.sort();
    versions
        .iter()
        .flat_map(|version| kinds.iter().map(move |kind| version.join(kind)))
        .filter(|dir| dir.is_dir())
        .collect()
}

/// Whether a test that compiles with NVRTC can run: `true` when NVRTC loads. Otherwise the
/// test should return at once, after this prints why, unless `GSYNC_REQUIRE_NVRTC=1`, which
/// turns the missing NVRTC into a panic. For the workspace's tests.
pub fn nvrtc_or_skip() -> bool {
    available_or_skip("NVRTC", toolkit()).is_some()
}

/// What `loaded` loaded, for a test that needs `what`; otherwise `None`, after printing why,
/// unless `GSYNC_REQUIRE_NVRTC=1` asks for every library the tests use, which turns the
/// missing one into a panic.
pub(crate) fn available_or_skip<T>(what: &str, loaded: Result<T>) -> Option<T> {
    match loaded {
        Ok(loaded) => Some(loaded),
        Err(error) if std::env::var_os("GSYNC_REQUIRE_NVRTC").is_some_and(|value| value == "1") => {
            panic!("GSYNC_REQUIRE_NVRTC=1 but {what} is unavailable: {error}")
        }
        Err(error) => {
            eprintln!("skipping: {what} is unavailable ({error})");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::elf::tests::{loaded_library, truncated_copy};
    use crate::test_support::{touch, TempDir};

    fn cuda13_wheel(site: &Path) {
        let cu13 = site.join("nvidia/cu13");
        touch(&cu13.join("lib/libnvrtc.so.13"));
        touch(&cu13.join("include/cooperative_groups.h"));
        std::fs::create_dir_all(cu13.join("include/cccl")).expect("create cccl");
    }

    #[test]
    fn finds_the_cuda13_wheel_layout_in_a_pythonpath_entry() {
        let tmp = TempDir::new("discover-cu13");
        let site = tmp.path().join("site");
        cuda13_wheel(&site);
        let env = SearchEnv { site_dirs: vec![site.clone()], ..SearchEnv::default() };
        let toolkit = env.locate().expect("the wheel is found");
        let cu13 = site.join("nvidia/cu13");
        assert_eq!(toolkit.nvrtc_library(), cu13.join("lib/libnvrtc.so.13"));
        let headers = toolkit.headers().expect("headers are found");
        assert_eq!(headers, [cu13.join("include"), cu13.join("include/cccl")]);
    }

    #[test]
    fn finds_the_cuda12_wheel_layout_in_a_virtualenv() {
        let tmp = TempDir::new("discover-cu12");
        let site = tmp.path().join("venv/lib/python3.11/site-packages");
        let nvidia = site.join("nvidia");
        touch(&nvidia.join("cuda_nvrtc/lib/libnvrtc.so.12"));
        touch(&nvidia.join("cuda_runtime/include/cooperative_groups.h"));
        std::fs::create_dir_all(nvidia.join("cuda_cccl/include")).expect("create cccl");
        let env = SearchEnv { python_prefixes: vec![tmp.path().join("venv")], ..SearchEnv::default() };
        let toolkit = env.locate().expect("the wheels are found");
        assert_eq!(toolkit.nvrtc_library(), nvidia.join("cuda_nvrtc/lib/libnvrtc.so.12"));
        let headers = toolkit.headers().expect("headers are found");
        assert_eq!(headers, [nvidia.join("cuda_runtime/include"), nvidia.join("cuda_cccl/include")]);
    }

    #[test]
    fn a_toolkit_root_comes_before_wheels_and_prefers_lib64() {
        let tmp = TempDir::new("discover-order");
        let root = tmp.path().join("cuda");
        touch(&root.join("lib64/libnvrtc.so"));
        touch(&root.join("lib/libnvrtc.so.13"));
        touch(&root.join("include/cooperative_groups.h"));
        let site = tmp.path().join("site");
        cuda13_wheel(&site);
        let env = SearchEnv {
            toolkit_roots: vec![tmp.path().join("missing"), root.clone()],
            site_dirs: vec![site],
            ..SearchEnv::default()
        };
        let toolkit = env.locate().expect("the toolkit is found");
        assert_eq!(toolkit.nvrtc_library(), root.join("lib64/libnvrtc.so"));
        assert_eq!(toolkit.include_dirs(), [root.join("include")]);
    }

    #[test]
    fn system_python_prefixes_search_dist_packages() {
        let tmp = TempDir::new("discover-dist");
        let site = tmp.path().join("lib/python3.12/dist-packages");
        cuda13_wheel(&site);
        let env = SearchEnv { system_python_prefixes: vec![tmp.path().to_owned()], ..SearchEnv::default() };
        let toolkit = env.locate().expect("the wheel is found");
        assert!(toolkit.nvrtc_library().starts_with(&site));
    }

    #[test]
    fn missing_nvrtc_reports_every_searched_directory() {
        let tmp = TempDir::new("discover-none");
        let site = tmp.path().join("site");
        std::fs::create_dir_all(&site).expect("create site");
        let env = SearchEnv {
            toolkit_roots: vec![tmp.path().join("cuda")],
            site_dirs: vec![site.clone()],
            ..SearchEnv::default()
        };
        let Err(Error::NvrtcNotFound { searched }) = env.locate() else {
            panic!("expected NvrtcNotFound");
        };
        assert_eq!(
            searched,
            [
                tmp.path().join("cuda/lib64"),
                tmp.path().join("cuda/lib"),
                site.join("nvidia/cu13/lib64"),
                site.join("nvidia/cu13/lib"),
                site.join("nvidia/cuda_nvrtc/lib"),
            ]
        );
    }

    #[test]
    fn a_truncated_nvrtc_is_an_error_naming_it_not_a_crash() {
        let tmp = TempDir::new("discover-truncated");
        let lib = tmp.path().join("cuda/lib");
        std::fs::create_dir_all(&lib).expect("create the lib directory");
        let nvrtc = truncated_copy(&loaded_library(), &lib, "libnvrtc.so.13", |len| len / 2);
        let env = SearchEnv { toolkit_roots: vec![tmp.path().join("cuda")], ..SearchEnv::default() };
        let toolkit = env.locate().expect("the file is found");
        match load_nvrtc(toolkit.nvrtc_library()) {
            Err(Error::DamagedLibrary { path, .. }) => assert_eq!(path, nvrtc),
            other => panic!("expected DamagedLibrary, got {other:?}"),
        }
        let builtins = truncated_copy(&loaded_library(), &lib, "libnvrtc-builtins.so.13.0", |len| len / 2);
        std::fs::copy(loaded_library(), &nvrtc).expect("make NVRTC whole");
        match load_nvrtc(&nvrtc) {
            Err(Error::DamagedLibrary { path, .. }) => assert_eq!(path, builtins, "the builtins are checked too"),
            other => panic!("expected DamagedLibrary, got {other:?}"),
        }
    }

    #[test]
    fn nvrtc_without_headers_reports_the_searched_include_directories() {
        let tmp = TempDir::new("discover-noheaders");
        let root = tmp.path().join("cuda");
        touch(&root.join("lib/libnvrtc.so.13"));
        let env = SearchEnv { toolkit_roots: vec![root.clone()], ..SearchEnv::default() };
        let toolkit = env.locate().expect("NVRTC alone is found");
        let Err(Error::CudaHeadersNotFound { header, searched }) = toolkit.headers() else {
            panic!("expected CudaHeadersNotFound");
        };
        assert_eq!(header, MARKER_HEADER);
        assert_eq!(searched, [root.join("include"), root.join("include/cccl")]);
    }
}
