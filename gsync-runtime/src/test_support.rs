//! Helpers shared by the unit tests.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use crate::barrier::Barrier;
use crate::core::args::KernelArgs;
use crate::core::config::LaunchConfig;
use crate::core::config_cache::ConfigCache;
use crate::core::device::DeviceInfo;
use crate::core::dynamic_shared::SharedLayout;
use crate::core::error::Result;
use crate::core::grid::Residency;
use crate::core::plan::{Device, KernelVariant, LaunchPlan, Measure};

/// A fresh directory under the system temp dir, removed on drop.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(name: &str) -> Self {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let unique = COUNTER.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("gsync-runtime-{name}-{}-{unique}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).expect("create a temporary directory");
        TempDir(path)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// An H200 as the driver describes it.
pub fn h200() -> DeviceInfo {
    DeviceInfo {
        name: "H200".into(),
        ordinal: 0,
        sm_count: 132,
        compute_capability: (9, 0),
        cooperative_launch: true,
        max_threads_per_block: 1024,
        max_shared_memory_per_block: 48 * 1024,
        max_shared_memory_per_block_optin: 227 * 1024,
        max_blocks_per_grid: u32::MAX,
        total_memory: 0,
        driver_cuda_version: None,
    }
}

/// Makes `path` each entry a cache must not read in turn: a symlink to `/dev/zero`, a FIFO, and
/// a regular file holding `oversized` (a valid entry, but over the cache's limit); asserts that
/// `hits` (whether the cache reads a value for `path`) says no to each within seconds, and
/// that after `store` (which writes a valid entry there) it says yes.
pub fn assert_hostile_entries_miss(
    path: &Path,
    oversized: &[u8],
    hits: impl Fn() -> bool + Send + Sync + 'static,
    store: impl Fn(),
) {
    use std::sync::{mpsc, Arc};
    use std::time::Duration;

    let hits = Arc::new(hits);
    let fifo = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).expect("a path without NUL");
    let make: [(&str, &dyn Fn()); 3] = [
        ("a symlink to /dev/zero", &|| std::os::unix::fs::symlink("/dev/zero", path).expect("create the symlink")),
        // SAFETY: `fifo` is a NUL-terminated path that outlives the call.
        ("a FIFO", &|| assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0, "create the FIFO")),
        ("an oversized file", &|| std::fs::write(path, oversized).expect("write the file")),
    ];
    for (kind, make) in make {
        let _ = std::fs::remove_file(path);
        make();
        let (sender, receiver) = mpsc::channel();
        let reader = Arc::clone(&hits);
        std::thread::spawn(move || sender.send(reader()));
        let hit = receiver.recv_timeout(Duration::from_secs(10));
        assert_eq!(hit, Ok(false), "{kind} is a miss, at once");
        store();
        assert!(hits(), "a store replaces {kind}");
    }
}

/// A device for the launch plan's tests: an H200's facts, an occupancy that depends on the
/// compiled barrier only, and, where `times` is set, tuning that measures each configuration
/// as `times` says. It records the variants asked about and the configurations measured.
pub struct FakeDevice {
    pub info: DeviceInfo,
    pub per_sm: fn(Barrier) -> u32,
    pub every_grid: bool,
    pub block_limit: u32,
    pub times: Option<fn(LaunchConfig) -> Duration>,
    pub cache: ConfigCache,
    pub asked: RefCell<Vec<Barrier>>,
    pub measured: RefCell<Vec<LaunchConfig>>,
}

impl FakeDevice {
    /// A GPU that tunes nothing, with `per_sm` blocks per SM of each compiled barrier.
    pub fn gpu(per_sm: fn(Barrier) -> u32) -> FakeDevice {
        FakeDevice {
            info: h200(),
            per_sm,
            every_grid: false,
            block_limit: i32::MAX as u32,
            times: None,
            cache: ConfigCache::in_dir(None),
            asked: RefCell::default(),
            measured: RefCell::default(),
        }
    }

    /// The compiled barriers asked about so far, in order.
    pub fn asked(&self) -> Vec<Barrier> {
        self.asked.borrow().clone()
    }
}

impl Device for FakeDevice {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn residency(&self, variant: &KernelVariant, _shared: &SharedLayout) -> Result<Residency> {
        self.asked.borrow_mut().push(variant.barrier);
        Ok(Residency { blocks_per_sm: (self.per_sm)(variant.barrier), sm_count: self.info.sm_count })
    }

    fn runs_every_grid(&self) -> bool {
        self.every_grid
    }

    fn block_limit(&self, _threads: u32) -> u32 {
        self.block_limit
    }

    fn block_limit_reason(&self) -> (String, String) {
        ("the fake".to_owned(), "it says so".to_owned())
    }

    fn tuned(&self) -> Option<&ConfigCache> {
        self.times.map(|_| &self.cache)
    }

    unsafe fn measurer<'s>(&'s self, _args: &'s KernelArgs<'s>) -> Result<Option<Box<dyn Measure + 's>>> {
        Ok(self.times.map(|times| Box::new(FakeMeasure { device: self, times }) as Box<dyn Measure + 's>))
    }
}

/// Measures a plan as its device's `times` says.
struct FakeMeasure<'s> {
    device: &'s FakeDevice,
    times: fn(LaunchConfig) -> Duration,
}

impl Measure for FakeMeasure<'_> {
    unsafe fn measure(&mut self, plan: &LaunchPlan) -> Result<Duration> {
        self.device.measured.borrow_mut().push(plan.config());
        Ok((self.times)(plan.config()))
    }
}

/// Creates an empty file at `path`, and the folders above it.
pub(crate) fn touch(path: &Path) {
    std::fs::create_dir_all(path.parent().expect("test paths have parents")).expect("create test directory");
    std::fs::write(path, b"").expect("create test file");
}
