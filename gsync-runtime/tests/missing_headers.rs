//! Compiling with NVRTC present but the CUDA headers missing: a typed error that says which
//! header is missing and how to install it, never "a bug in gsync".
//!
//! A process finds NVRTC once, so this file is its own test binary: it points
//! `GSYNC_CUDA_ROOT` at a directory holding only NVRTC's libraries (links to those of the pip
//! wheels on `PYTHONPATH`, as `scripts/test` sets it) before anything searches.

use std::path::{Path, PathBuf};

use gsync_runtime::{compile, toolkit, Error};

/// The `lib` directory of the CUDA 13 NVRTC wheel on `PYTHONPATH`, if there is one.
fn wheel_lib() -> Option<PathBuf> {
    let paths = std::env::var_os("PYTHONPATH")?;
    std::env::split_paths(&paths)
        .map(|site| site.join("nvidia/cu13/lib"))
        .find(|lib| lib.join("libnvrtc.so.13").is_file())
}

/// A CUDA root with `lib/` linking NVRTC's libraries and no `include/`.
fn headerless_root(lib: &Path) -> PathBuf {
    let root = std::env::temp_dir().join(format!("gsync-headerless-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("lib")).expect("create the root");
    for entry in std::fs::read_dir(lib).expect("read the wheel's lib") {
        let path = entry.expect("a directory entry").path();
        if path.file_name().is_some_and(|name| name.to_string_lossy().starts_with("libnvrtc")) {
            let link = root.join("lib").join(path.file_name().expect("a file name"));
            std::os::unix::fs::symlink(&path, link).expect("link a library");
        }
    }
    root
}

#[test]
fn compiling_without_headers_names_the_missing_header_and_the_fix() {
    let Some(lib) = wheel_lib() else {
        assert!(
            std::env::var_os("GSYNC_REQUIRE_NVRTC").is_none_or(|v| v != "1"),
            "GSYNC_REQUIRE_NVRTC=1 but no CUDA 13 NVRTC wheel is on PYTHONPATH"
        );
        eprintln!("skipping: no CUDA 13 NVRTC wheel on PYTHONPATH");
        return;
    };
    let root = headerless_root(&lib);
    // Before anything searches: the toolkit is found once per process.
    std::env::set_var("GSYNC_CUDA_ROOT", &root);
    let found = toolkit().expect("NVRTC alone is found");
    assert!(found.nvrtc_library().starts_with(&root), "{found:?}");
    assert!(matches!(found.headers(), Err(Error::CudaHeadersNotFound { .. })));

    // Kernels that include nothing still compile: the software barriers need no header.
    compile("extern \"C\" __global__ void plain(float* x) { x[threadIdx.x] += 1.0f; }\n", "plain", (9, 0))
        .expect("no header needed");

    let cooperative = "#include <cooperative_groups.h>\nextern \"C\" __global__ void k() {\n    \
                       cooperative_groups::this_grid().sync();\n}\n";
    let error = compile(cooperative, "k", (9, 0)).expect_err("the header is missing");
    let message = error.to_string();
    let Error::CudaHeadersNotFound { header, searched } = &error else {
        panic!("expected CudaHeadersNotFound, got {error}");
    };
    assert_eq!(header, "cooperative_groups.h");
    assert_eq!(searched.first(), Some(&root.join("include")));
    assert!(message.contains("pip install nvidia-cuda-runtime nvidia-cuda-cccl"), "{message}");
    assert!(!message.contains("bug in gsync"), "{message}");
    let _ = std::fs::remove_dir_all(&root);
}
