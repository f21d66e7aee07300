//! Helpers shared by the unit tests.

use std::path::{Path, PathBuf};

use crate::core::device::DeviceInfo;
use std::sync::atomic::{AtomicUsize, Ordering};

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
