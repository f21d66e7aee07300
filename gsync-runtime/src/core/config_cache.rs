//! Tuned configurations remembered: in memory for the process, and on disk beside the compiled
//! kernels (`<cache dir>/configs/`), so that a kernel is tuned once per machine.
//!
//! Like the kernel cache, this is an optimisation only: an unreadable, corrupt or unwritable
//! entry means tuning again, never an error.

use std::collections::HashMap;
use std::fs;
use std::path::PathBuf;
use std::sync::{Mutex, PoisonError};

use sha2::{Digest, Sha256};

use crate::barrier::Barrier;
use crate::core::config::{LaunchConfig, SizeClass};
use crate::core::device::DeviceInfo;
use crate::core::disk::{cache_dir_from_env, read_entry, write_atomically};
use crate::core::launch::Launch;
use crate::core::plan::KernelBuild;

/// The first line of an entry, naming its format.
const HEADER: &str = "gsync launch configuration 1";

/// The largest entry read back: an entry is a few dozen bytes, so a larger file is not one of
/// ours and is a miss.
const MAX_ENTRY_BYTES: u64 = 4096;

/// Everything that decides the best configuration of a launch that names none: the kernel (as the
/// launch configures it), the GPU, the launch's barrier, the size class, and the `toolchain`
/// that compiles and runs it (the NVRTC and driver versions); this crate's version stands for
/// the prelude, the barrier fragments and Auto's table.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ConfigKey<'a> {
    kernel: &'a KernelBuild,
    info: &'a DeviceInfo,
    barrier: Barrier,
    class: SizeClass,
    toolchain: &'a str,
    /// The size class of the launch's dynamic shared memory (0 for none).
    shared: u32,
}

/// A [`ConfigKey`] within one GPU's cache in one process, where the GPU and the toolchain never
/// change: cheap to build and compare on every launch. The kernel's texts are told apart by
/// address and length: the same address and length are the same text, and the same text at
/// another address only costs a read of the disk cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct ConfigId {
    symbol: (usize, usize),
    body: (usize, usize),
    bounds_checks: bool,
    default_threads: u32,
    blocks_per_sm: u32,
    barrier: Barrier,
    class: SizeClass,
    shared: u32,
}

impl<'a> ConfigKey<'a> {
    /// The key of `kernel` (as the launch configures it) launched with `launch` (which names
    /// no configuration) on `info`'s GPU, for buffers of size class `class`, with `toolchain`.
    pub fn new(
        kernel: &'a KernelBuild,
        info: &'a DeviceInfo,
        launch: &Launch,
        class: SizeClass,
        toolchain: &'a str,
    ) -> ConfigKey<'a> {
        ConfigKey { kernel, info, barrier: launch.selected_barrier(), class, toolchain, shared: 0 }
    }

    /// The same key for a call whose shared slices take dynamic shared memory of size class
    /// `class` (see `core::dynamic_shared::shared_class`).
    pub fn shared(self, class: u32) -> ConfigKey<'a> {
        ConfigKey { shared: class, ..self }
    }

    fn body(&self) -> &'a str {
        self.kernel.body()
    }

    fn id(&self) -> ConfigId {
        let text = |text: &str| (text.as_ptr() as usize, text.len());
        ConfigId {
            symbol: text(self.kernel.symbol),
            body: text(self.body()),
            bounds_checks: self.kernel.bounds_checks,
            default_threads: self.kernel.default_threads,
            blocks_per_sm: self.kernel.blocks_per_sm,
            barrier: self.barrier,
            class: self.class,
            shared: self.shared,
        }
    }

    /// The hex SHA-256 of every input, which names the entry on disk.
    fn digest(&self) -> String {
        let mut hasher = Sha256::new();
        let mut field = |bytes: &[u8]| {
            hasher.update((bytes.len() as u64).to_le_bytes());
            hasher.update(bytes);
        };
        let info = self.info;
        field(HEADER.as_bytes());
        field(env!("CARGO_PKG_VERSION").as_bytes());
        field(self.toolchain.as_bytes());
        field(self.kernel.symbol.as_bytes());
        field(self.kernel.rust_signature.as_bytes());
        field(self.body().as_bytes());
        field(&self.kernel.default_threads.to_le_bytes());
        // Only where the kernel names it, so that configurations stored before it existed stay valid.
        if self.kernel.blocks_per_sm != 0 {
            field(&self.kernel.blocks_per_sm.to_le_bytes());
        }
        field(info.name.as_bytes());
        field(format!("sm_{}{} × {}", info.compute_capability.0, info.compute_capability.1, info.sm_count).as_bytes());
        field(self.barrier.to_string().as_bytes());
        field(&self.class.log2().to_le_bytes());
        // Absent without shared slices, so that the configurations stored before them stay valid.
        if self.shared != 0 {
            field(&self.shared.to_le_bytes());
        }
        hasher.finalize().iter().map(|byte| format!("{byte:02x}")).collect()
    }
}

/// Configurations remembered in memory and, where there is a cache directory, on disk. One cache
/// serves one GPU.
#[derive(Debug)]
pub(crate) struct ConfigCache {
    dir: Option<PathBuf>,
    memory: Mutex<HashMap<ConfigId, LaunchConfig>>,
}

impl ConfigCache {
    /// The cache in the kernel cache's directory (see `GSYNC_CACHE_DIR`).
    pub fn from_env() -> ConfigCache {
        ConfigCache::in_dir(cache_dir_from_env())
    }

    /// The cache under `dir`; with `None`, in memory only.
    pub fn in_dir(dir: Option<PathBuf>) -> ConfigCache {
        ConfigCache { dir: dir.map(|dir| dir.join("configs")), memory: Mutex::new(HashMap::new()) }
    }

    /// The configuration remembered under `key` in this process.
    pub fn in_memory(&self, key: &ConfigKey<'_>) -> Option<LaunchConfig> {
        self.memory().get(&key.id()).copied()
    }

    /// The configuration stored under `key` on disk, if the entry is whole and valid.
    pub fn on_disk(&self, key: &ConfigKey<'_>) -> Option<LaunchConfig> {
        parse(&String::from_utf8(read_entry(&self.path(key)?, MAX_ENTRY_BYTES)?).ok()?)
    }

    /// The configuration remembered under `key`, from memory or else from disk (then remembered).
    pub fn get(&self, key: &ConfigKey<'_>) -> Option<LaunchConfig> {
        self.in_memory(key).or_else(|| Some(self.remember_first(key, self.on_disk(key)?)))
    }

    /// Remembers `config` under `key` unless a configuration is remembered already, and stores
    /// it on disk if it was kept (a disk that refuses it is ignored); the configuration that is
    /// there after.
    pub fn put_first(&self, key: &ConfigKey<'_>, config: LaunchConfig) -> LaunchConfig {
        let kept = self.remember_first(key, config);
        if kept == config {
            self.write(key, config);
        }
        kept
    }

    /// Remembers `config` under `key` for this process unless a configuration is there already; the
    /// configuration that is there after.
    pub fn remember_first(&self, key: &ConfigKey<'_>, config: LaunchConfig) -> LaunchConfig {
        *self.memory().entry(key.id()).or_insert(config)
    }

    /// Remembers `config` under `key`, replacing what is there, and stores it on disk.
    #[cfg(test)]
    fn put(&self, key: &ConfigKey<'_>, config: LaunchConfig) {
        self.memory().insert(key.id(), config);
        self.write(key, config);
    }

    fn write(&self, key: &ConfigKey<'_>, config: LaunchConfig) {
        if let Some(path) = self.path(key) {
            let _ = write_atomically(&path, &[render(config).as_bytes()]);
        }
    }

    /// Forgets the configuration under `key`, in memory and on disk.
    pub fn forget(&self, key: &ConfigKey<'_>) {
        self.memory().remove(&key.id());
        if let Some(path) = self.path(key) {
            let _ = fs::remove_file(path);
        }
    }

    fn path(&self, key: &ConfigKey<'_>) -> Option<PathBuf> {
        Some(self.dir.as_ref()?.join(format!("{}.config", key.digest())))
    }

    fn memory(&self) -> std::sync::MutexGuard<'_, HashMap<ConfigId, LaunchConfig>> {
        // Entries are inserted whole, so the map is valid after any panic.
        self.memory.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// An entry's text: the header, then `blocks threads barrier`.
fn render(config: LaunchConfig) -> String {
    format!("{HEADER}\n{} {} {}\n", config.blocks, config.threads, config.barrier)
}

/// The configuration in an entry's text, if it is whole and valid.
fn parse(text: &str) -> Option<LaunchConfig> {
    let mut lines = text.lines();
    if lines.next()? != HEADER {
        return None;
    }
    let mut fields = lines.next()?.split(' ');
    let blocks: u32 = fields.next()?.parse().ok()?;
    let threads: u32 = fields.next()?.parse().ok()?;
    let barrier: Barrier = fields.next()?.parse().ok()?;
    let valid = blocks > 0 && threads > 0 && barrier != Barrier::Auto && fields.next().is_none();
    valid.then_some(LaunchConfig { blocks, threads, barrier })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::kernel::tests::SMOOTH;
    use crate::core::kernel::KernelSpec;
    use crate::test_support::{assert_hostile_entries_miss, h200, TempDir};
    use std::sync::LazyLock;

    fn info(name: &str) -> DeviceInfo {
        DeviceInfo { name: name.into(), ..h200() }
    }

    static H200: LazyLock<DeviceInfo> = LazyLock::new(|| info("H200"));

    const TOOLCHAIN: &str = "nvrtc (13, 0), driver Some((13, 0))";

    fn key() -> ConfigKey<'static> {
        let kernel: &'static KernelBuild = Box::leak(Box::new(KernelBuild::new(&SMOOTH, &Launch::new())));
        ConfigKey::new(kernel, &H200, &Launch::new(), SizeClass::of(1 << 20), TOOLCHAIN)
    }

    /// The digest and the in-process id of a key.
    fn names(kernel: &KernelSpec, gpu: &str, launch: &Launch, len: usize, toolchain: &str) -> (String, ConfigId) {
        let info = info(gpu);
        let kernel = KernelBuild::new(kernel, launch);
        let key = ConfigKey::new(&kernel, &info, launch, SizeClass::of(len), toolchain);
        (key.digest(), key.id())
    }

    const CONFIG: LaunchConfig =
        LaunchConfig { blocks: 132, threads: 1024, barrier: Barrier::Ilbs { groups: Some(6) } };

    #[test]
    fn the_key_changes_with_whatever_decides_the_configuration() {
        let base = || names(&SMOOTH, "H200", &Launch::new(), 1 << 20, TOOLCHAIN);
        let unchecked = KernelSpec { bounds_checks: !SMOOTH.bounds_checks, ..SMOOTH };
        let renamed = KernelSpec { symbol: "other_", ..SMOOTH };
        let declared = KernelSpec { default_threads: 64, ..SMOOTH };
        // Within one process and GPU, the id tells these apart; on disk, the digest.
        let in_process = [
            names(&SMOOTH, "H200", &Launch::new(), 1 << 21, TOOLCHAIN),
            names(&SMOOTH, "H200", &Launch::new().barrier(Barrier::Lbs), 1 << 20, TOOLCHAIN),
            names(&unchecked, "H200", &Launch::new(), 1 << 20, TOOLCHAIN),
            names(&renamed, "H200", &Launch::new(), 1 << 20, TOOLCHAIN),
            names(&declared, "H200", &Launch::new(), 1 << 20, TOOLCHAIN),
        ];
        for (i, (digest, id)) in in_process.iter().enumerate() {
            assert_ne!((&base().0, base().1), (digest, *id), "variant {i}");
            assert_ne!(&base().0, digest, "variant {i} on disk");
            assert_ne!(base().1, *id, "variant {i} in memory");
        }
        let other_gpu = names(&SMOOTH, "H100", &Launch::new(), 1 << 20, TOOLCHAIN);
        let other_toolchain = names(&SMOOTH, "H200", &Launch::new(), 1 << 20, "nvrtc (13, 1)");
        assert_ne!(base().0, other_gpu.0);
        assert_ne!(base().0, other_toolchain.0);
        assert_eq!(base(), base(), "the key is deterministic");
        assert_eq!(
            base(),
            names(&SMOOTH, "H200", &Launch::new(), (1 << 19) + 1, TOOLCHAIN),
            "one class per power of two"
        );
    }

    #[test]
    fn a_remembered_configuration_survives_the_process_on_disk() {
        let tmp = TempDir::new("config-cache");
        ConfigCache::in_dir(Some(tmp.path().to_owned())).put(&key(), CONFIG);
        let fresh = ConfigCache::in_dir(Some(tmp.path().to_owned()));
        assert_eq!(fresh.in_memory(&key()), None);
        assert_eq!(fresh.get(&key()), Some(CONFIG));
        assert_eq!(fresh.in_memory(&key()), Some(CONFIG), "read once, then remembered");
        let h100 = info("H100");
        let kernel = KernelBuild::new(&SMOOTH, &Launch::new());
        let other = ConfigKey::new(&kernel, &h100, &Launch::new(), SizeClass::of(1 << 20), TOOLCHAIN);
        assert_eq!(fresh.on_disk(&other), None);
    }

    #[test]
    fn without_a_directory_configurations_are_remembered_in_memory_only() {
        let cache = ConfigCache::in_dir(None);
        assert_eq!(cache.get(&key()), None);
        cache.put(&key(), CONFIG);
        assert_eq!(cache.get(&key()), Some(CONFIG));
    }

    #[test]
    fn the_first_configuration_remembered_stays_and_a_forgotten_one_goes_from_disk_too() {
        let tmp = TempDir::new("config-first");
        let cache = ConfigCache::in_dir(Some(tmp.path().to_owned()));
        let other = LaunchConfig { blocks: 8, ..CONFIG };
        assert_eq!(cache.remember_first(&key(), CONFIG), CONFIG);
        assert_eq!(cache.put_first(&key(), other), CONFIG, "a promise is kept");
        assert_eq!(ConfigCache::in_dir(Some(tmp.path().to_owned())).get(&key()), None, "and not written");
        cache.forget(&key());
        assert_eq!(cache.put_first(&key(), other), other);
        assert_eq!(ConfigCache::in_dir(Some(tmp.path().to_owned())).get(&key()), Some(other));
        cache.forget(&key());
        assert_eq!(ConfigCache::in_dir(Some(tmp.path().to_owned())).get(&key()), None);
    }

    #[test]
    fn corrupt_or_foreign_entries_are_misses() {
        let tmp = TempDir::new("config-corrupt");
        let cache = ConfigCache::in_dir(Some(tmp.path().to_owned()));
        cache.put(&key(), CONFIG);
        let path = cache.path(&key()).expect("a directory");
        for text in [
            "",
            "gsync launch configuration 1\n",
            "gsync launch configuration 0\n132 1024 lbs\n",
            "gsync launch configuration 1\n0 1024 lbs\n",
            "gsync launch configuration 1\n132 1024 auto\n",
            "gsync launch configuration 1\n132 1024 nonsense\n",
            "gsync launch configuration 1\n132 1024 lbs extra\n",
        ] {
            fs::write(&path, text).expect("overwrite the entry");
            assert_eq!(ConfigCache::in_dir(Some(tmp.path().to_owned())).get(&key()), None, "{text:?}");
        }
        assert_eq!(parse(&render(CONFIG)), Some(CONFIG), "what is written reads back");
    }

    #[test]
    fn devices_fifos_and_oversized_files_are_misses_and_are_replaced_on_put() {
        let tmp = TempDir::new("config-hostile");
        let dir = tmp.path().to_owned();
        let cache = ConfigCache::in_dir(Some(dir.clone()));
        let path = cache.path(&key()).expect("a directory");
        fs::create_dir_all(path.parent().expect("a parent")).expect("create the configs directory");
        // What follows the second line is ignored, so only the size makes this entry a miss.
        let mut oversized = render(CONFIG);
        oversized.push_str(&" ".repeat(MAX_ENTRY_BYTES as usize + 1 - oversized.len()));
        let hits = move || ConfigCache::in_dir(Some(dir.clone())).on_disk(&key()).is_some();
        assert_hostile_entries_miss(&path, oversized.as_bytes(), hits, || cache.put(&key(), CONFIG));
    }

    #[test]
    fn an_unwritable_directory_still_remembers_in_memory() {
        let tmp = TempDir::new("config-unwritable");
        let file = tmp.path().join("not-a-dir");
        fs::write(&file, b"").expect("create a file");
        let cache = ConfigCache::in_dir(Some(file));
        cache.put(&key(), CONFIG);
        assert_eq!(cache.get(&key()), Some(CONFIG));
    }
}
