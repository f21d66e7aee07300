//! Helpers shared by the unit tests.

use std::path::{Path, PathBuf};
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

/// Whether NVRTC can be used. Without it the test should return early, after this prints a
/// notice, unless `GSYNC_REQUIRE_NVRTC=1`, in which case this fails the test.
pub fn nvrtc_available() -> bool {
    match crate::cuda::discover::toolkit() {
        Ok(_) => true,
        Err(error) if std::env::var_os("GSYNC_REQUIRE_NVRTC").is_some_and(|v| v == "1") => {
            panic!("GSYNC_REQUIRE_NVRTC=1 but NVRTC is unavailable: {error}")
        }
        Err(error) => {
            eprintln!("skipping: NVRTC is unavailable ({error})");
            false
        }
    }
}
