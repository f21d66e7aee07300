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
