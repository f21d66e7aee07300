//! A shared library checked before the dynamic loader maps it.
//!
//! The loader maps a library's segments as the file's headers describe them; a segment that
//! ends past the end of a truncated file is mapped anyway, and touching it kills the process
//! with SIGBUS. So every library gsync loads by path is checked first: a 64-bit little-endian
//! ELF file whose program headers' segments and section header table lie within the file.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

use crate::core::disk::open_regular;
use crate::core::error::{Error, Result};

/// The size of a 64-bit ELF header.
const HEADER_BYTES: u64 = 64;
/// The size of a 64-bit program header, the smallest entry a valid table may declare.
const PROGRAM_HEADER_BYTES: u64 = 56;

/// Checks that `path` is a whole 64-bit little-endian ELF file, so that loading it cannot
/// fault; [`Error::DamagedLibrary`] naming the file and what is wrong with it otherwise.
pub(crate) fn check_library(path: &Path) -> Result<()> {
    check(path).map_err(|problem| Error::DamagedLibrary { path: path.to_owned(), problem })
}

fn check(path: &Path) -> std::result::Result<(), String> {
    let (file, metadata) = open_regular(path).map_err(|error| format!("it cannot be read ({error})"))?;
    let size = metadata.len();
    let header = read(&file, size, 0, HEADER_BYTES, "the ELF header")?;
    if header[..4] != *b"\x7fELF" || header[4] != 2 || header[5] != 1 {
        return Err("it is not a 64-bit little-endian ELF file".to_owned());
    }
    let (phoff, shoff) = (u64_at(&header, 0x20), u64_at(&header, 0x28));
    let (phentsize, phnum) = (u16_at(&header, 0x36), u16_at(&header, 0x38));
    let (shentsize, shnum) = (u16_at(&header, 0x3a), u16_at(&header, 0x3c));
    if phnum > 0 && phentsize < PROGRAM_HEADER_BYTES {
        return Err(format!("its program headers are {phentsize} bytes, fewer than {PROGRAM_HEADER_BYTES}"));
    }
    let table = read(&file, size, phoff, phnum * phentsize, "the program header table")?;
    for index in 0..phnum {
        let entry = &table[(index * phentsize) as usize..];
        let (offset, filesz) = (u64_at(entry, 0x08), u64_at(entry, 0x20));
        within(size, offset, filesz, &format!("segment {index}"))?;
    }
    // With more sections than fit in `e_shnum`, it is 0 and the table's first entry counts them.
    if shoff != 0 {
        within(size, shoff, shnum.max(1) * shentsize, "the section header table")?;
    }
    Ok(())
}

/// `len` bytes of `file` (of `size` bytes) at `offset`, or why `what` is not there.
fn read(file: &File, size: u64, offset: u64, len: u64, what: &str) -> std::result::Result<Vec<u8>, String> {
    within(size, offset, len, what)?;
    let mut bytes = vec![0; len as usize];
    file.read_exact_at(&mut bytes, offset).map_err(|error| format!("{what} cannot be read ({error})"))?;
    Ok(bytes)
}

/// Whether bytes `offset..offset + len` lie within a file of `size` bytes; if not, which ones
/// `what` claims.
fn within(size: u64, offset: u64, len: u64, what: &str) -> std::result::Result<(), String> {
    match offset.checked_add(len) {
        Some(end) if end <= size => Ok(()),
        _ => Err(format!("{what} (bytes {offset} to {offset} + {len}) ends past the end of the file ({size} bytes)")),
    }
}

fn u16_at(bytes: &[u8], at: usize) -> u64 {
    u64::from(u16::from_le_bytes([bytes[at], bytes[at + 1]]))
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    let mut field = [0; 8];
    field.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(field)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::test_support::TempDir;
    use std::path::PathBuf;

    /// A shared library this process has loaded (the C library, normally).
    pub(crate) fn loaded_library() -> PathBuf {
        let maps = std::fs::read_to_string("/proc/self/maps").expect("read /proc/self/maps");
        maps.lines()
            .filter_map(|line| line.split_whitespace().nth(5))
            .map(PathBuf::from)
            .find(|path| path.to_string_lossy().contains(".so") && path.is_file())
            .expect("this process has a shared library loaded")
    }

    /// A copy of `library` in `dir`, named `name`, cut to `keep` of its bytes.
    pub(crate) fn truncated_copy(library: &Path, dir: &Path, name: &str, keep: impl Fn(usize) -> usize) -> PathBuf {
        let bytes = std::fs::read(library).expect("read the library");
        let copy = dir.join(name);
        std::fs::write(&copy, &bytes[..keep(bytes.len())]).expect("write the copy");
        copy
    }

    #[test]
    fn a_whole_library_passes_and_a_truncated_copy_is_named_as_damaged() {
        let tmp = TempDir::new("elf-truncated");
        let library = loaded_library();
        check_library(&library).expect("a loaded library is whole");
        let whole = truncated_copy(&library, tmp.path(), "whole.so", |len| len);
        check_library(&whole).expect("a whole copy passes");
        let half = truncated_copy(&library, tmp.path(), "half.so", |len| len / 2);
        let error = check_library(&half).expect_err("half a library is refused");
        let message = error.to_string();
        assert!(matches!(&error, Error::DamagedLibrary { path, .. } if *path == half), "{error:?}");
        assert!(message.contains(&half.display().to_string()) && message.contains("reinstall"), "{message}");
    }

    #[test]
    fn headers_alone_or_something_else_are_refused() {
        let tmp = TempDir::new("elf-other");
        let library = loaded_library();
        let header_only = truncated_copy(&library, tmp.path(), "header.so", |_| HEADER_BYTES as usize);
        let problem = |path: &Path| match check_library(path) {
            Err(Error::DamagedLibrary { problem, .. }) => problem,
            other => panic!("expected DamagedLibrary, got {other:?}"),
        };
        assert!(problem(&header_only).contains("program header table"));
        std::fs::write(tmp.path().join("text.so"), b"not a library").expect("write a file");
        assert!(problem(&tmp.path().join("text.so")).contains("the ELF header"));
        assert!(problem(tmp.path()).contains("cannot be read"), "a directory");
        assert!(problem(Path::new("/dev/zero")).contains("cannot be read"), "a device");
    }
}
