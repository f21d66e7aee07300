//! Files gsync keeps between runs: where its cache directory is, and how an entry is written so
//! that no reader sees half of it.

use std::ffi::OsString;
use std::fs;
use std::io::Write;
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
}
