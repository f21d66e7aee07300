//! The on-disk CUBIN cache, so that a kernel is compiled once per machine, not once per run.
//!
//! Entries are keyed by everything that changes the binary: the source, the NVRTC options, the
//! architecture and the NVRTC version. The cache is an optimisation only: an unreadable,
//! corrupt or unwritable cache means compiling again, never an error.

use std::path::PathBuf;

use sha2::{Digest, Sha256};

use crate::core::disk::{cache_dir_from_env, read_entry, write_atomically};
use crate::core::error::Result;
use crate::cuda::compile::{self, compile, Usage};
use crate::cuda::discover;

/// Marks a cache file of this format: the digest of the rest, ptxas's registers (4 bytes) and
/// spilled bytes (8), then the CUBIN.
const MAGIC: &[u8; 8] = b"GSYNCCB2";
const USAGE_LEN: usize = 12;
const DIGEST_LEN: usize = 32;

/// The largest entry read back, header included: far above any kernel's CUBIN; a larger file
/// is not one of ours and is a miss.
const MAX_ENTRY_BYTES: u64 = 64 << 20;

/// Compiles `source` for `arch`, reusing a CUBIN from the disk cache when there is one; the
/// CUBIN and ptxas's report of it.
pub(crate) fn compile_cached(source: &str, kernel_name: &str, arch: (u32, u32)) -> Result<(Vec<u8>, Usage)> {
    DiskCache::from_env().compile(source, kernel_name, arch)
}

/// The hex SHA-256 naming one cache entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CacheKey(String);

impl CacheKey {
    /// The key of a compilation; every input is length-prefixed so none can bleed into another.
    pub fn new(source: &str, options: &[String], arch: (u32, u32), nvrtc: (i32, i32)) -> Self {
        let mut hasher = Sha256::new();
        let mut field = |bytes: &[u8]| {
            hasher.update((bytes.len() as u64).to_le_bytes());
            hasher.update(bytes);
        };
        field(MAGIC);
        field(source.as_bytes());
        field(&(options.len() as u64).to_le_bytes());
        for option in options {
            field(option.as_bytes());
        }
        field(format!("sm_{}{}", arch.0, arch.1).as_bytes());
        field(format!("nvrtc {}.{}", nvrtc.0, nvrtc.1).as_bytes());
        let digest = hasher.finalize();
        CacheKey(digest.iter().map(|byte| format!("{byte:02x}")).collect())
    }
}

/// A directory of CUBINs; with no directory it caches nothing.
#[derive(Clone, Debug)]
pub(crate) struct DiskCache {
    dir: Option<PathBuf>,
}

impl DiskCache {
    /// The cache in `GSYNC_CACHE_DIR`, else `$XDG_CACHE_HOME/gsync`, else `~/.cache/gsync`.
    pub fn from_env() -> Self {
        DiskCache { dir: cache_dir_from_env() }
    }

    /// The cache in `dir`.
    #[cfg(test)]
    pub fn at(dir: impl Into<PathBuf>) -> Self {
        DiskCache { dir: Some(dir.into()) }
    }

    /// Compiles `source` for `arch` unless this cache already holds the result.
    fn compile(&self, source: &str, kernel_name: &str, arch: (u32, u32)) -> Result<(Vec<u8>, Usage)> {
        let options = compile::options(discover::toolkit()?, arch);
        let key = CacheKey::new(source, &options, arch, compile::nvrtc_version()?);
        if let Some(entry) = self.load(&key) {
            return Ok(entry);
        }
        let compiled = compile(source, kernel_name, arch)?;
        self.store(&key, &compiled.cubin, compiled.usage);
        Ok((compiled.cubin, compiled.usage))
    }

    /// The CUBIN and its report stored under `key`, if they are there and intact.
    pub fn load(&self, key: &CacheKey) -> Option<(Vec<u8>, Usage)> {
        let bytes = read_entry(&self.path(key)?, MAX_ENTRY_BYTES)?;
        let rest = bytes.strip_prefix(MAGIC)?;
        if rest.len() < DIGEST_LEN + USAGE_LEN {
            return None;
        }
        let (digest, payload) = rest.split_at(DIGEST_LEN);
        if Sha256::digest(payload).as_slice() != digest {
            return None;
        }
        let (usage, cubin) = payload.split_at(USAGE_LEN);
        let registers = u32::from_le_bytes(usage[..4].try_into().ok()?);
        let spill_bytes = u64::from_le_bytes(usage[4..].try_into().ok()?);
        Some((cubin.to_vec(), Usage { registers, spill_bytes }))
    }

    /// Stores `cubin` and its report under `key`; failures are ignored, the next run compiles
    /// again.
    pub fn store(&self, key: &CacheKey, cubin: &[u8], usage: Usage) {
        if let Some(path) = self.path(key) {
            let mut payload = Vec::with_capacity(USAGE_LEN + cubin.len());
            payload.extend_from_slice(&usage.registers.to_le_bytes());
            payload.extend_from_slice(&usage.spill_bytes.to_le_bytes());
            payload.extend_from_slice(cubin);
            let _ = write_atomically(&path, &[MAGIC, Sha256::digest(&payload).as_slice(), &payload]);
        }
    }

    fn path(&self, key: &CacheKey) -> Option<PathBuf> {
        Some(self.dir.as_ref()?.join(format!("{}.cubin", key.0)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::discover::nvrtc_or_skip;
    use crate::test_support::{assert_hostile_entries_miss, TempDir};
    use std::fs;

    /// A report with both fields set, which an entry must give back.
    const USAGE: Usage = Usage { registers: 40, spill_bytes: 88 };

    fn key() -> CacheKey {
        CacheKey::new("src", &["-a".into(), "-b".into()], (8, 0), (13, 0))
    }

    #[test]
    fn the_key_changes_with_every_input() {
        let base = key();
        let options = ["-a".to_owned(), "-b".to_owned()];
        let variants = [
            CacheKey::new("src2", &options, (8, 0), (13, 0)),
            CacheKey::new("src", &["-a".into()], (8, 0), (13, 0)),
            CacheKey::new("src", &["-a-b".into()], (8, 0), (13, 0)),
            CacheKey::new("src", &options, (9, 0), (13, 0)),
            CacheKey::new("src", &options, (8, 0), (13, 1)),
        ];
        assert_eq!(base, key(), "the key is deterministic");
        for variant in &variants {
            assert_ne!(&base, variant);
        }
        assert_eq!(base.0.len(), 64);
    }

    #[test]
    fn a_stored_cubin_loads_back() {
        let tmp = TempDir::new("cache-roundtrip");
        let cache = DiskCache::at(tmp.path().join("nested/dir"));
        assert_eq!(cache.load(&key()), None);
        cache.store(&key(), b"\x7fELF cubin bytes", USAGE);
        assert_eq!(cache.load(&key()), Some((b"\x7fELF cubin bytes".to_vec(), USAGE)));
        let leftovers: Vec<_> = fs::read_dir(tmp.path().join("nested/dir"))
            .expect("the cache directory exists")
            .filter_map(|entry| entry.ok())
            .filter(|entry| entry.file_name().to_string_lossy().starts_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty(), "no temporary files remain");
    }

    #[test]
    fn a_corrupt_entry_is_a_miss_and_is_replaced_on_store() {
        let tmp = TempDir::new("cache-corrupt");
        let cache = DiskCache::at(tmp.path());
        cache.store(&key(), b"cubin", USAGE);
        let path = cache.path(&key()).expect("the cache has a directory");
        let mut bytes = fs::read(&path).expect("the entry exists");
        let last = bytes.len() - 1;
        bytes[last] ^= 0xff;
        fs::write(&path, &bytes).expect("corrupt the entry");
        assert_eq!(cache.load(&key()), None, "a flipped bit is detected");
        fs::write(&path, b"GSYNC").expect("truncate the entry");
        assert_eq!(cache.load(&key()), None, "a truncated file is a miss");
        cache.store(&key(), b"cubin", USAGE);
        assert_eq!(cache.load(&key()), Some((b"cubin".to_vec(), USAGE)));
    }

    #[test]
    fn devices_fifos_and_oversized_files_are_misses_and_are_replaced_on_store() {
        let tmp = TempDir::new("cache-hostile");
        let cache = DiskCache::at(tmp.path());
        let path = cache.path(&key()).expect("the cache has a directory");
        let payload = vec![0u8; MAX_ENTRY_BYTES as usize + 1 - MAGIC.len() - DIGEST_LEN];
        let oversized = [&MAGIC[..], Sha256::digest(&payload).as_slice(), &payload].concat();
        let reader = cache.clone();
        let hits = move || reader.load(&key()).is_some();
        assert_hostile_entries_miss(&path, &oversized, hits, || cache.store(&key(), b"cubin", USAGE));
    }

    #[test]
    fn an_unwritable_cache_is_silently_skipped() {
        let tmp = TempDir::new("cache-unwritable");
        let file = tmp.path().join("not-a-dir");
        fs::write(&file, b"").expect("create a file");
        let cache = DiskCache::at(file.join("cache"));
        cache.store(&key(), b"cubin", USAGE);
        assert_eq!(cache.load(&key()), None);
    }

    #[test]
    fn compiling_twice_reuses_the_cached_cubin_and_recovers_from_corruption() {
        if !nvrtc_or_skip() {
            return;
        }
        let tmp = TempDir::new("cache-compile");
        let cache = DiskCache::at(tmp.path());
        let source = "extern \"C\" __global__ void noop() {}\n";
        let first = cache.compile(source, "noop", (8, 0)).expect("compiles");
        let entries: Vec<PathBuf> = fs::read_dir(tmp.path())
            .expect("the cache directory exists")
            .filter_map(|entry| entry.ok().map(|entry| entry.path()))
            .collect();
        assert_eq!(entries.len(), 1, "one entry: {entries:?}");
        // A cached CUBIN that is not NVRTC's proves the second call read the cache.
        let key_path = &entries[0];
        let mut marked = fs::read(key_path).expect("read the entry");
        let payload = [&[7, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0][..], b"cached"].concat();
        marked.truncate(MAGIC.len());
        marked.extend_from_slice(Sha256::digest(&payload).as_slice());
        marked.extend_from_slice(&payload);
        fs::write(key_path, &marked).expect("replace the entry");
        let hit = cache.compile(source, "noop", (8, 0)).expect("hit");
        assert_eq!(hit, (b"cached".to_vec(), Usage { registers: 7, spill_bytes: 9 }));
        fs::write(key_path, b"garbage").expect("corrupt the entry");
        assert_eq!(cache.compile(source, "noop", (8, 0)).expect("recompiles"), first);
    }
}
