//! Finding and loading NVSHMEM's host library and nvJitLink, once per process and only when a
//! team asks for them.
//!
//! NVSHMEM is searched in `GSYNC_NVSHMEM_DIR`, then as the pip wheel `nvidia-nvshmem-cu13`
//! (`nvidia/nvshmem`) in each `PYTHONPATH` entry and the site-packages that
//! [`discover`](crate::cuda::discover) searches for NVRTC. The folder must hold
//! `lib/libnvshmem_host.so.3`, `lib/libnvshmem_device.a`, `lib/nvshmem_bootstrap_uid.so.3` and
//! `include/nvshmem.h`; the other bootstrap plugins beside the UID one (PMI, PMI-2, PMIx, MPI,
//! SHMEM), which a launcher's PEs load, are used where present. nvJitLink
//! (`libnvJitLink.so.13`) is searched beside the NVRTC that compiles kernels first, then in the
//! CUDA toolkit roots and the CUDA 13 wheels (`nvidia/cu13/lib`, where `nvidia-nvjitlink`
//! installs it).

use std::ffi::{c_char, c_int, c_uint, c_void};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use cudarc::driver::sys::{CUmodule, CUstream};
use libloading::Library;

use crate::core::error::{Error, Result};
use crate::cuda::discover::{self, SearchEnv};
use crate::cuda::elf::check_library;

/// The NVSHMEM release gsync is built for, as (major, minor).
pub const REQUIRED_RELEASE: (i32, i32) = (3, 8);

const HOST_LIBRARY: &str = "lib/libnvshmem_host.so.3";
const DEVICE_LIBRARY: &str = "lib/libnvshmem_device.a";
const UID_PLUGIN: &str = "lib/nvshmem_bootstrap_uid.so.3";
/// NVSHMEM's bootstrap plugins as the wheel ships them beside the host library, each with the
/// variable through which NVSHMEM takes its path (NVSHMEM's environment variables page).
const BOOTSTRAP_PLUGINS: [(&str, &str); 6] = [
    ("NVSHMEM_BOOTSTRAP_UID_PLUGIN", UID_PLUGIN),
    ("NVSHMEM_BOOTSTRAP_PMI_PLUGIN", "lib/nvshmem_bootstrap_pmi.so.3"),
    ("NVSHMEM_BOOTSTRAP_PMI2_PLUGIN", "lib/nvshmem_bootstrap_pmi2.so.3"),
    ("NVSHMEM_BOOTSTRAP_PMIX_PLUGIN", "lib/nvshmem_bootstrap_pmix.so.3"),
    ("NVSHMEM_BOOTSTRAP_MPI_PLUGIN", "lib/nvshmem_bootstrap_mpi.so.3"),
    ("NVSHMEM_BOOTSTRAP_SHMEM_PLUGIN", "lib/nvshmem_bootstrap_shmem.so.3"),
];
const MAIN_HEADER: &str = "include/nvshmem.h";
const VERSION_HEADER: &str = "include/non_abi/nvshmem_version.h";
const NVJITLINK: &str = "libnvJitLink.so.13";

/// NVSHMEM's unique id (`nvshmemx_uniqueid_t`): 128 bytes that PE 0 hands to the others.
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct UniqueId {
    pub version: c_int,
    pub internal: [u8; 124],
}

impl std::fmt::Debug for UniqueId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UniqueId").field("version", &self.version).finish_non_exhaustive()
    }
}

impl UniqueId {
    /// `NVSHMEMX_UNIQUEID_INITIALIZER`.
    pub fn new() -> Self {
        UniqueId { version: (1 << 16) + std::mem::size_of::<UniqueId>() as c_int, internal: [0; 124] }
    }
}

/// `nvshmemx_uniqueid_args_t`.
#[repr(C)]
struct UniqueIdArgs {
    version: c_int,
    id: *mut UniqueId,
    myrank: c_int,
    nranks: c_int,
}

/// `nvshmemx_init_args_t` (version 2).
#[repr(C)]
struct InitArgs {
    version: c_int,
    uid_args: UniqueIdArgs,
    cuda_device_id: c_int,
    content: [u8; 92],
}

/// `nvshmemx_init_attr_t` (version 2), which `nvshmemx_hostlib_init_attr` takes.
#[repr(C)]
pub(crate) struct InitAttr {
    version: c_int,
    mpi_comm: *mut c_void,
    args: InitArgs,
}

const _: () = assert!(std::mem::size_of::<UniqueId>() == 128);
const _: () = assert!(std::mem::size_of::<UniqueIdArgs>() == 24);
const _: () = assert!(std::mem::size_of::<InitArgs>() == 128);
const _: () = assert!(std::mem::size_of::<InitAttr>() == 144);

impl InitAttr {
    /// `NVSHMEMX_INIT_ATTR_INITIALIZER`: no device chosen (NVSHMEM takes the current context),
    /// no unique id yet.
    pub fn new() -> Self {
        let size = |bytes: usize| bytes as c_int;
        InitAttr {
            version: (2 << 16) + size(std::mem::size_of::<InitAttr>()),
            mpi_comm: std::ptr::null_mut(),
            args: InitArgs {
                version: (2 << 16) + size(std::mem::size_of::<InitArgs>()),
                uid_args: UniqueIdArgs {
                    version: (1 << 16) + size(std::mem::size_of::<UniqueIdArgs>()),
                    id: std::ptr::null_mut(),
                    myrank: -1,
                    nranks: -1,
                },
                cuda_device_id: -1,
                content: [0; 92],
            },
        }
    }
}

/// `NVSHMEMX_INIT_WITH_UNIQUEID`.
pub(crate) const INIT_WITH_UNIQUEID: c_uint = 1 << 3;
/// `NVSHMEM_STATUS_IS_INITIALIZED`.
pub(crate) const STATUS_IS_INITIALIZED: c_int = 2;
/// `NVSHMEM_TEAM_WORLD`.
pub(crate) const TEAM_WORLD: c_int = 0;

/// The functions of `libnvshmem_host.so.3` gsync calls, all real exports of the library (the
/// header's `nvshmem_init` and `nvshmemx_init_attr` are inlines over `nvshmemi_init_thread`,
/// which lives in the static device library; `nvshmemx_hostlib_init_attr` is the exported
/// initialisation for programs that link only the host library).
#[allow(missing_docs)]
pub(crate) struct HostApi {
    pub vendor_version: unsafe extern "C" fn(*mut c_int, *mut c_int, *mut c_int),
    pub get_uniqueid: unsafe extern "C" fn(*mut UniqueId) -> c_int,
    pub set_attr_uniqueid_args: unsafe extern "C" fn(c_int, c_int, *const UniqueId, *mut InitAttr) -> c_int,
    pub hostlib_init_attr: unsafe extern "C" fn(c_uint, *mut InitAttr) -> c_int,
    pub hostlib_finalize: unsafe extern "C" fn(),
    pub init_status: unsafe extern "C" fn() -> c_int,
    pub my_pe: unsafe extern "C" fn() -> c_int,
    pub n_pes: unsafe extern "C" fn() -> c_int,
    pub calloc: unsafe extern "C" fn(usize, usize) -> *mut c_void,
    pub free: unsafe extern "C" fn(*mut c_void),
    pub ptr: unsafe extern "C" fn(*const c_void, c_int) -> *mut c_void,
    pub barrier_all: unsafe extern "C" fn(),
    pub barrier_all_on_stream: unsafe extern "C" fn(CUstream),
    pub uint64_max_reduce_on_stream: unsafe extern "C" fn(c_int, *mut u64, *const u64, usize, CUstream) -> c_int,
    pub cumodule_init: unsafe extern "C" fn(CUmodule) -> c_int,
    pub cumodule_finalize: unsafe extern "C" fn(CUmodule) -> c_int,
}

/// An nvJitLink handle (`nvJitLinkHandle`).
pub(crate) type JitLinkHandle = *mut c_void;

/// The functions of `libnvJitLink.so.13`, by the versioned names its header's inlines call.
#[allow(missing_docs)]
pub(crate) struct JitLinkApi {
    pub version: unsafe extern "C" fn(*mut c_uint, *mut c_uint) -> c_int,
    pub create: unsafe extern "C" fn(*mut JitLinkHandle, u32, *const *const c_char) -> c_int,
    pub add_data: unsafe extern "C" fn(JitLinkHandle, c_int, *const c_void, usize, *const c_char) -> c_int,
    pub add_file: unsafe extern "C" fn(JitLinkHandle, c_int, *const c_char) -> c_int,
    pub complete: unsafe extern "C" fn(JitLinkHandle) -> c_int,
    pub cubin_size: unsafe extern "C" fn(JitLinkHandle, *mut usize) -> c_int,
    pub cubin: unsafe extern "C" fn(JitLinkHandle, *mut c_void) -> c_int,
    pub error_log_size: unsafe extern "C" fn(JitLinkHandle, *mut usize) -> c_int,
    pub error_log: unsafe extern "C" fn(JitLinkHandle, *mut c_char) -> c_int,
    pub info_log_size: unsafe extern "C" fn(JitLinkHandle, *mut usize) -> c_int,
    pub info_log: unsafe extern "C" fn(JitLinkHandle, *mut c_char) -> c_int,
    pub destroy: unsafe extern "C" fn(*mut JitLinkHandle) -> c_int,
}

/// NVSHMEM's host library and nvJitLink, loaded, with the files a team kernel is built from.
pub struct Nvshmem {
    dir: PathBuf,
    nvjitlink: PathBuf,
    release: (i32, i32, i32),
    jitlink_version: (u32, u32),
    pub(crate) host: HostApi,
    pub(crate) jit: JitLinkApi,
    /// Kept open: the function pointers above point into them.
    _libraries: [Library; 2],
}

impl std::fmt::Debug for Nvshmem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Nvshmem")
            .field("dir", &self.dir)
            .field("release", &self.release)
            .field("nvjitlink", &self.nvjitlink)
            .field("jitlink_version", &self.jitlink_version)
            .finish_non_exhaustive()
    }
}

impl Nvshmem {
    /// Finds and loads NVSHMEM and nvJitLink (see the module's documentation for where), once
    /// per process; only success is remembered. Checks that NVSHMEM's headers and host library
    /// are both release [`REQUIRED_RELEASE`].
    pub fn load() -> Result<&'static Nvshmem> {
        static LOADED: OnceLock<Nvshmem> = OnceLock::new();
        if let Some(nvshmem) = LOADED.get() {
            return Ok(nvshmem);
        }
        let located = Search::from_process().locate()?;
        let nvshmem = Nvshmem::open(located)?;
        Ok(LOADED.get_or_init(|| nvshmem))
    }

    fn open(located: Located) -> Result<Nvshmem> {
        let headers = header_release(&located.dir)?;
        let host_path = located.dir.join(HOST_LIBRARY);
        let host_library = open_library(&host_path)?;
        let jit_library = open_library(&located.nvjitlink)?;
        let host = host_api(&host_library, &host_path)?;
        let jit = jit_api(&jit_library, &located.nvjitlink)?;
        let (mut major, mut minor, mut patch) = (0, 0, 0);
        // SAFETY: the function only writes the three ints.
        unsafe { (host.vendor_version)(&mut major, &mut minor, &mut patch) };
        check_release(&located.dir, headers, (major, minor, patch))?;
        let (mut jit_major, mut jit_minor) = (0, 0);
        // SAFETY: the function only writes the two ints.
        let status = unsafe { (jit.version)(&mut jit_major, &mut jit_minor) };
        if status != 0 {
            return Err(Error::NvJitLinkUnavailable {
                problem: format!("{} does not report its version (status {status})", located.nvjitlink.display()),
                searched: vec![located.nvjitlink.clone()],
            });
        }
        Ok(Nvshmem {
            dir: located.dir,
            nvjitlink: located.nvjitlink,
            release: headers,
            jitlink_version: (jit_major, jit_minor),
            host,
            jit,
            _libraries: [host_library, jit_library],
        })
    }

    /// The NVSHMEM folder (holding `include/` and `lib/`).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// NVSHMEM's release, as (major, minor, patch); headers and host library agree on it.
    pub fn release(&self) -> (i32, i32, i32) {
        self.release
    }

    /// NVSHMEM's include folder, which NVRTC needs for a team kernel.
    pub fn include_dir(&self) -> PathBuf {
        self.dir.join("include")
    }

    /// NVSHMEM's static device library, which nvJitLink links into a team kernel.
    pub fn device_library(&self) -> PathBuf {
        self.dir.join(DEVICE_LIBRARY)
    }

    /// NVSHMEM's bootstrap plugins in its folder (UID, PMI, PMI-2, PMIx, MPI, SHMEM; those
    /// present), each with the variable through which NVSHMEM takes its path.
    pub fn bootstrap_plugins(&self) -> Vec<(&'static str, PathBuf)> {
        bootstrap_plugins_in(&self.dir)
    }

    /// The nvJitLink library that was loaded.
    pub fn nvjitlink(&self) -> &Path {
        &self.nvjitlink
    }

    /// nvJitLink's version, as (major, minor).
    pub fn nvjitlink_version(&self) -> (u32, u32) {
        self.jitlink_version
    }
}

/// Where NVSHMEM and nvJitLink were found.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Located {
    dir: PathBuf,
    nvjitlink: PathBuf,
}

/// The places to search, captured from the environment so that tests can fabricate them.
#[derive(Clone, Debug, Default)]
struct Search {
    /// Folders that may be NVSHMEM's (holding `include/` and `lib/`), in order.
    nvshmem_dirs: Vec<PathBuf>,
    /// Folders that may hold `libnvJitLink.so.13`, in order.
    nvjitlink_dirs: Vec<PathBuf>,
}

impl Search {
    fn from_process() -> Self {
        let explicit = std::env::var_os("GSYNC_NVSHMEM_DIR").filter(|dir| !dir.is_empty()).map(PathBuf::from);
        // The NVRTC that compiles team kernels, when there is one: its own nvJitLink matches it.
        let nvrtc_dir =
            discover::toolkit().ok().and_then(|toolkit| toolkit.nvrtc_library().parent().map(Path::to_owned));
        Search::new(explicit, nvrtc_dir, &SearchEnv::from_process())
    }

    fn new(explicit: Option<PathBuf>, nvrtc_dir: Option<PathBuf>, env: &SearchEnv) -> Self {
        let sites = env.site_packages();
        let nvshmem_dirs = explicit.into_iter().chain(sites.iter().map(|site| site.join("nvidia/nvshmem"))).collect();
        let toolkits = env.toolkit_roots.iter().flat_map(|root| [root.join("lib64"), root.join("lib")]);
        let wheels = sites.iter().map(|site| site.join("nvidia/cu13/lib"));
        let mut nvjitlink_dirs: Vec<PathBuf> = nvrtc_dir.into_iter().chain(toolkits).chain(wheels).collect();
        let mut seen = std::collections::HashSet::new();
        nvjitlink_dirs.retain(|dir| seen.insert(dir.clone()));
        Search { nvshmem_dirs, nvjitlink_dirs }
    }

    fn locate(&self) -> Result<Located> {
        let dir = self.nvshmem_dir()?;
        let nvjitlink =
            self.nvjitlink_dirs.iter().map(|dir| dir.join(NVJITLINK)).find(|path| path.is_file()).ok_or_else(|| {
                Error::NvJitLinkUnavailable { problem: "not found".into(), searched: self.nvjitlink_dirs.clone() }
            })?;
        Ok(Located { dir, nvjitlink })
    }

    /// The first folder with NVSHMEM's host library, once it is checked to hold the rest.
    fn nvshmem_dir(&self) -> Result<PathBuf> {
        let Some(dir) = self.nvshmem_dirs.iter().find(|dir| dir.join(HOST_LIBRARY).is_file()) else {
            return Err(Error::NvshmemNotFound {
                what: format!("host library ({HOST_LIBRARY})"),
                searched: self.nvshmem_dirs.clone(),
            });
        };
        let pieces = [
            ("device library", DEVICE_LIBRARY),
            ("UID bootstrap plugin", UID_PLUGIN),
            ("headers", MAIN_HEADER),
            ("version header", VERSION_HEADER),
        ];
        for (what, file) in pieces {
            if !dir.join(file).is_file() {
                return Err(Error::NvshmemNotFound { what: format!("{what} ({file})"), searched: vec![dir.clone()] });
            }
        }
        Ok(dir.clone())
    }
}

/// The bootstrap plugins in the NVSHMEM folder `dir`, with their variables.
fn bootstrap_plugins_in(dir: &Path) -> Vec<(&'static str, PathBuf)> {
    BOOTSTRAP_PLUGINS
        .iter()
        .map(|&(variable, file)| (variable, dir.join(file)))
        .filter(|(_, path)| path.is_file())
        .collect()
}

/// The release NVSHMEM's headers in `dir` declare.
fn header_release(dir: &Path) -> Result<(i32, i32, i32)> {
    let path = dir.join(VERSION_HEADER);
    let text = std::fs::read_to_string(&path).map_err(|error| Error::NvshmemVersion {
        dir: dir.to_owned(),
        required: release_name(REQUIRED_RELEASE),
        problem: format!("{} cannot be read ({error})", path.display()),
    })?;
    parse_release(&text).ok_or_else(|| Error::NvshmemVersion {
        dir: dir.to_owned(),
        required: release_name(REQUIRED_RELEASE),
        problem: format!("{} does not define NVSHMEM_VENDOR_{{MAJOR,MINOR,PATCH}}_VERSION", path.display()),
    })
}

/// The release in the text of `nvshmem_version.h`.
fn parse_release(text: &str) -> Option<(i32, i32, i32)> {
    let define = |name: &str| {
        text.lines().find_map(|line| {
            let mut words = line.split_whitespace();
            (words.next() == Some("#define") && words.next() == Some(name)).then(|| words.next()?.parse().ok())?
        })
    };
    Some((
        define("NVSHMEM_VENDOR_MAJOR_VERSION")?,
        define("NVSHMEM_VENDOR_MINOR_VERSION")?,
        define("NVSHMEM_VENDOR_PATCH_VERSION")?,
    ))
}

/// Checks that headers and host library are the same release, and the one gsync needs.
fn check_release(dir: &Path, headers: (i32, i32, i32), library: (i32, i32, i32)) -> Result<()> {
    let name = |(major, minor, patch): (i32, i32, i32)| format!("{major}.{minor}.{patch}");
    let problem = if headers != library {
        format!("the headers are {} but libnvshmem_host.so.3 is {}", name(headers), name(library))
    } else if (headers.0, headers.1) != REQUIRED_RELEASE {
        format!("it is release {}", name(headers))
    } else {
        return Ok(());
    };
    Err(Error::NvshmemVersion { dir: dir.to_owned(), required: release_name(REQUIRED_RELEASE), problem })
}

fn release_name((major, minor): (i32, i32)) -> String {
    format!("{major}.{minor}")
}

/// Opens a library by absolute path, after checking that it is whole.
fn open_library(path: &Path) -> Result<Library> {
    check_library(path)?;
    // SAFETY: NVSHMEM's host library and nvJitLink have no initialisers with preconditions
    // (NVSHMEM reads its environment and loads its plugins only when initialised).
    unsafe { Library::new(path) }
        .map_err(|source| Error::LibraryLoad { path: path.to_owned(), source: Box::new(source) })
}

/// Copies the function `name` out of `library`, which must outlive its use.
///
/// # Safety
/// `T` must be the function's C signature.
unsafe fn function<T: Copy>(library: &Library, path: &Path, name: &str) -> Result<T> {
    let symbol = format!("{name}\0");
    // SAFETY: the caller vouches for `T`.
    let found = unsafe { library.get::<T>(symbol.as_bytes()) };
    found
        .map(|function| *function)
        .map_err(|source| Error::LibraryLoad { path: path.to_owned(), source: Box::new(source) })
}

fn host_api(library: &Library, path: &Path) -> Result<HostApi> {
    // SAFETY: each type is the C signature of NVSHMEM 3.8's host API function, as its
    // headers declare it (`host/nvshmem_api.h`, `host/nvshmemx_api.h`,
    // `host/nvshmemx_coll_api.h`); cudaStream_t is CUstream.
    unsafe {
        Ok(HostApi {
            vendor_version: function(library, path, "nvshmemx_vendor_get_version_info")?,
            get_uniqueid: function(library, path, "nvshmemx_get_uniqueid")?,
            set_attr_uniqueid_args: function(library, path, "nvshmemx_set_attr_uniqueid_args")?,
            hostlib_init_attr: function(library, path, "nvshmemx_hostlib_init_attr")?,
            hostlib_finalize: function(library, path, "nvshmemx_hostlib_finalize")?,
            init_status: function(library, path, "nvshmemx_init_status")?,
            my_pe: function(library, path, "nvshmem_my_pe")?,
            n_pes: function(library, path, "nvshmem_n_pes")?,
            calloc: function(library, path, "nvshmem_calloc")?,
            free: function(library, path, "nvshmem_free")?,
            ptr: function(library, path, "nvshmem_ptr")?,
            barrier_all: function(library, path, "nvshmem_barrier_all")?,
            barrier_all_on_stream: function(library, path, "nvshmemx_barrier_all_on_stream")?,
            uint64_max_reduce_on_stream: function(library, path, "nvshmemx_uint64_max_reduce_on_stream")?,
            cumodule_init: function(library, path, "nvshmemx_cumodule_init")?,
            cumodule_finalize: function(library, path, "nvshmemx_cumodule_finalize")?,
        })
    }
}

fn jit_api(library: &Library, path: &Path) -> Result<JitLinkApi> {
    // SAFETY: each type is the C signature in CUDA 13.0's nvJitLink.h, whose inline
    // functions call these versioned entry points.
    unsafe {
        Ok(JitLinkApi {
            version: function(library, path, "nvJitLinkVersion")?,
            create: function(library, path, "__nvJitLinkCreate_13_0")?,
            add_data: function(library, path, "__nvJitLinkAddData_13_0")?,
            add_file: function(library, path, "__nvJitLinkAddFile_13_0")?,
            complete: function(library, path, "__nvJitLinkComplete_13_0")?,
            cubin_size: function(library, path, "__nvJitLinkGetLinkedCubinSize_13_0")?,
            cubin: function(library, path, "__nvJitLinkGetLinkedCubin_13_0")?,
            error_log_size: function(library, path, "__nvJitLinkGetErrorLogSize_13_0")?,
            error_log: function(library, path, "__nvJitLinkGetErrorLog_13_0")?,
            info_log_size: function(library, path, "__nvJitLinkGetInfoLogSize_13_0")?,
            info_log: function(library, path, "__nvJitLinkGetInfoLog_13_0")?,
            destroy: function(library, path, "__nvJitLinkDestroy_13_0")?,
        })
    }
}

/// NVSHMEM for a test that needs it and nvJitLink: `None` when they do not load, after this
/// prints why (the test then returns at once), unless `GSYNC_REQUIRE_NVRTC=1`, which turns
/// the missing NVSHMEM into a panic.
pub fn nvshmem_or_skip() -> Option<&'static Nvshmem> {
    crate::cuda::discover::available_or_skip("NVSHMEM", Nvshmem::load())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{touch, TempDir};

    fn nvshmem_wheel(dir: &Path) {
        for file in [HOST_LIBRARY, DEVICE_LIBRARY, UID_PLUGIN, MAIN_HEADER, VERSION_HEADER] {
            touch(&dir.join(file));
        }
    }

    #[test]
    fn the_explicit_folder_comes_before_the_wheels_and_nvrtc_dir_before_toolkits() {
        let tmp = TempDir::new("nvshmem-order");
        let explicit = tmp.path().join("mine");
        let site = tmp.path().join("site");
        nvshmem_wheel(&explicit);
        nvshmem_wheel(&site.join("nvidia/nvshmem"));
        touch(&site.join("nvidia/cu13/lib").join(NVJITLINK));
        let nvrtc_dir = tmp.path().join("nvrtc");
        touch(&nvrtc_dir.join(NVJITLINK));
        let env = SearchEnv { site_dirs: vec![site.clone()], ..SearchEnv::default() };
        let located = Search::new(Some(explicit.clone()), Some(nvrtc_dir.clone()), &env).locate().expect("found");
        assert_eq!(located, Located { dir: explicit, nvjitlink: nvrtc_dir.join(NVJITLINK) });
        let located = Search::new(None, None, &env).locate().expect("found");
        assert_eq!(located.dir, site.join("nvidia/nvshmem"));
        assert_eq!(located.nvjitlink, site.join("nvidia/cu13/lib").join(NVJITLINK));
    }

    #[test]
    fn a_missing_piece_is_named_with_the_pip_command() {
        let tmp = TempDir::new("nvshmem-missing");
        let dir = tmp.path().join("nvidia/nvshmem");
        nvshmem_wheel(&dir);
        std::fs::remove_file(dir.join(DEVICE_LIBRARY)).expect("remove");
        let env = SearchEnv { site_dirs: vec![tmp.path().to_owned()], ..SearchEnv::default() };
        let error = Search::new(None, None, &env).locate().expect_err("incomplete");
        let message = error.to_string();
        assert!(matches!(error, Error::NvshmemNotFound { .. }), "{message}");
        assert!(message.contains("lib/libnvshmem_device.a"), "{message}");
        assert!(message.contains("pip install 'nvidia-nvshmem-cu13==3.8.0'"), "{message}");
    }

    #[test]
    fn no_nvshmem_lists_every_searched_folder() {
        let tmp = TempDir::new("nvshmem-none");
        let env = SearchEnv { site_dirs: vec![tmp.path().join("a"), tmp.path().join("b")], ..SearchEnv::default() };
        let Err(Error::NvshmemNotFound { searched, .. }) = Search::new(None, None, &env).locate() else {
            panic!("expected NvshmemNotFound");
        };
        assert_eq!(searched, [tmp.path().join("a/nvidia/nvshmem"), tmp.path().join("b/nvidia/nvshmem")]);
    }

    #[test]
    fn no_nvjitlink_names_the_wheel() {
        let tmp = TempDir::new("nvshmem-nojit");
        nvshmem_wheel(&tmp.path().join("nvidia/nvshmem"));
        let env = SearchEnv { site_dirs: vec![tmp.path().to_owned()], ..SearchEnv::default() };
        let error = Search::new(None, None, &env).locate().expect_err("no nvJitLink");
        assert!(error.to_string().contains("pip install 'nvidia-nvjitlink==13.0.*'"), "{error}");
    }

    #[test]
    fn the_bootstrap_plugins_present_are_named_with_nvshmem_s_variables() {
        let tmp = TempDir::new("nvshmem-plugins");
        nvshmem_wheel(tmp.path());
        touch(&tmp.path().join("lib/nvshmem_bootstrap_pmix.so.3"));
        let plugins = bootstrap_plugins_in(tmp.path());
        assert_eq!(
            plugins,
            [
                ("NVSHMEM_BOOTSTRAP_UID_PLUGIN", tmp.path().join(UID_PLUGIN)),
                ("NVSHMEM_BOOTSTRAP_PMIX_PLUGIN", tmp.path().join("lib/nvshmem_bootstrap_pmix.so.3")),
            ]
        );
    }

    #[test]
    fn releases_are_read_from_the_header_and_must_match_the_library_and_the_pin() {
        let header = "#ifndef X\n#define NVSHMEM_VENDOR_MAJOR_VERSION 3\n#define NVSHMEM_VENDOR_MINOR_VERSION 8\n\
                      #define NVSHMEM_VENDOR_PATCH_VERSION 0\n";
        assert_eq!(parse_release(header), Some((3, 8, 0)));
        assert_eq!(parse_release("#define NVSHMEM_VENDOR_MAJOR_VERSION 3\n"), None);
        let dir = Path::new("/opt/nvshmem");
        assert!(check_release(dir, (3, 8, 0), (3, 8, 0)).is_ok());
        let mismatch = check_release(dir, (3, 8, 0), (3, 7, 1)).expect_err("differ").to_string();
        assert!(mismatch.contains("the headers are 3.8.0 but libnvshmem_host.so.3 is 3.7.1"), "{mismatch}");
        let old = check_release(dir, (3, 4, 5), (3, 4, 5)).expect_err("old").to_string();
        assert!(old.contains("it is release 3.4.5") && old.contains("NVSHMEM 3.8"), "{old}");
    }

    #[test]
    fn the_init_attributes_match_nvshmems_initialiser() {
        let attr = InitAttr::new();
        assert_eq!(attr.version, (2 << 16) + 144);
        assert_eq!(attr.args.version, (2 << 16) + 128);
        assert_eq!(attr.args.uid_args.version, (1 << 16) + 24);
        assert_eq!(UniqueId::new().version, (1 << 16) + 128);
    }

    #[test]
    fn the_provisioned_nvshmem_loads_and_is_release_3_8() {
        let Some(nvshmem) = nvshmem_or_skip() else {
            return;
        };
        let (major, minor, _) = nvshmem.release();
        assert_eq!((major, minor), REQUIRED_RELEASE);
        assert!(nvshmem.device_library().is_file());
        assert_eq!(nvshmem.nvjitlink_version().0, 13);
    }
}
