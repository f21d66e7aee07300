//! Files gsync keeps between runs: where its cache directory is, how an entry is written so
//! that no reader sees half of it, and how one is read so that no entry can block or exhaust
//! the reader.

use std::ffi::OsString;
use std::fs;
use std::io::{self, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The cache directory from the environment: `GSYNC_CACHE_DIR`, else `$XDG_CACHE_HOME/gsync`,
/// else `~/.cache/gsync`; `None` when none is set.
pub(crate) fn cache_dir_from_env() -> Option<PathBuf> {
    cache_dir(|name| std::env::var_os(name).filter(|value| !value.is_empty()))
}

fn cache_dir(var: impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    if let Some(dir) = var("GSYNC_CACHE_DIR") {
        return Some(dir.into());
    }
    if let Some(xdg) = var("XDG_CACHE_HOME") {
        return Some(Path::new(&xdg).join("gsync"));
    }
    var("HOME").map(|home| Path::new(&home).join(".cache").join("gsync"))
}

/// Writes a temporary file and renames it over `path`, so that readers, including other
/// processes, see either no entry or a whole one.
pub(crate) fn write_atomically(path: &Path, parts: &[&[u8]]) -> std::io::Result<()> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let dir = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir)?;
    let unique = COUNTER.fetch_add(1, Ordering::Relaxed);
    let temp = dir.join(format!(".tmp-{}-{unique}", std::process::id()));
    let written = fs::File::create(&temp).and_then(|mut file| {
        parts.iter().try_for_each(|part| file.write_all(part))?;
        file.sync_all()
    });
    let renamed = written.and_then(|()| fs::rename(&temp, path));
    if renamed.is_err() {
        let _ = fs::remove_file(&temp);
    }
    renamed
}

/// The bytes of the cache entry at `path` if it is a regular file of at most `limit` bytes, else
/// `None`, a miss: a device, a FIFO or a socket (through a symlink or not) or a larger file is
/// never read. The type and size are checked before opening and again on the opened file,
/// which is opened without blocking, and at most `limit + 1` bytes are read, so an entry
/// replaced in between is a miss too.
pub(crate) fn read_entry(path: &Path, limit: u64) -> Option<Vec<u8>> {
    let (file, metadata) = open_regular(path).ok()?;
    if metadata.len() > limit {
        return None;
    }
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes).ok()?;
    (bytes.len() as u64 <= limit).then_some(bytes)
}

/// Opens `path` for reading, with its metadata, if it is a regular file (through a symlink or
/// not), checked before opening and again on the opened file, which is opened without blocking
/// on a FIFO; anything else is an `InvalidInput` error.
pub(crate) fn open_regular(path: &Path) -> io::Result<(fs::File, fs::Metadata)> {
    let not_regular = || io::Error::new(io::ErrorKind::InvalidInput, "not a regular file");
    if !fs::metadata(path)?.is_file() {
        return Err(not_regular());
    }
    let file = fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(path)?;
    let metadata = file.metadata()?;
    if !metadata.is_file() {
        return Err(not_regular());
    }
    Ok((file, metadata))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_directory_follows_the_environment() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |name: &str| vars.iter().find(|(var, _)| *var == name).map(|(_, value)| OsString::from(value))
        };
        let all = env(&[("GSYNC_CACHE_DIR", "/g"), ("XDG_CACHE_HOME", "/x"), ("HOME", "/h")]);
        assert_eq!(cache_dir(all), Some(PathBuf::from("/g")));
        let xdg = env(&[("XDG_CACHE_HOME", "/x"), ("HOME", "/h")]);
        assert_eq!(cache_dir(xdg), Some(PathBuf::from("/x/gsync")));
        assert_eq!(cache_dir(env(&[("HOME", "/h")])), Some(PathBuf::from("/h/.cache/gsync")));
        assert_eq!(cache_dir(env(&[])), None);
    }

    #[test]
    fn an_entry_is_read_up_to_its_limit() {
        let tmp = crate::test_support::TempDir::new("disk-limit");
        let path = tmp.path().join("entry");
        fs::write(&path, b"1234").expect("write the entry");
        assert_eq!(read_entry(&path, 4).as_deref(), Some(&b"1234"[..]));
        assert_eq!(read_entry(&path, 3), None);
        assert_eq!(read_entry(&tmp.path().join("missing"), 4), None);
        assert_eq!(read_entry(tmp.path(), 4), None, "a directory is a miss");
    }
}
