//! Building a team kernel: NVRTC compiles it to LTO-IR (`-rdc=true -dlto`), and nvJitLink
//! links that with NVSHMEM's device library into a CUBIN. Needs no GPU.

use std::ffi::{c_char, c_void, CString};
use std::path::PathBuf;

use crate::core::error::{Error, Result};
use crate::cuda::compile::{
    nvrtc_version, options_for_target, run_nvrtc, with_match_by_sign_fallback, Compiled, Output, Usage,
};
use crate::cuda::discover;
use crate::cuda::nvshmem::library::{JitLinkApi, JitLinkHandle, Nvshmem};

/// `NVJITLINK_INPUT_LTOIR`.
const INPUT_LTOIR: i32 = 3;
/// `NVJITLINK_INPUT_LIBRARY`.
const INPUT_LIBRARY: i32 = 6;

/// Compiles `source` for compute capability `arch` and links it with NVSHMEM's device library,
/// so that its kernels may call NVSHMEM's device API.
///
/// The NVRTC options are [`compile`](crate::compile)'s, with a virtual architecture
/// (`compute_XY`), `-rdc=true -dlto` and NVSHMEM's include folder; nvJitLink links with
/// `-arch=sm_XY -lto`. A module loaded from the CUBIN must be registered with
/// [`NvshmemPe::register_module`](super::NvshmemPe::register_module) before a launch.
pub fn link_kernel(nvshmem: &Nvshmem, source: &str, kernel_name: &str, arch: (u32, u32)) -> Result<Compiled> {
    let toolkit = discover::toolkit()?;
    toolkit.headers()?;
    check_nvjitlink(nvshmem)?;
    let (major, minor) = arch;
    let mut options = options_for_target(toolkit, format!("--gpu-architecture=compute_{major}{minor}"));
    options.extend(["-rdc=true".to_owned(), "-dlto".to_owned(), format!("-I{}", nvshmem.include_dir().display())]);
    let header_search: Vec<PathBuf> = toolkit.header_search().iter().cloned().chain([nvshmem.include_dir()]).collect();
    // ptxas runs in nvJitLink here, so a failure to allocate predicates shows at the link.
    with_match_by_sign_fallback(options, |options| {
        let (ir, log, _) = run_nvrtc(source, kernel_name, options, &header_search, Output::LtoIr)?;
        let cubin = Linker::new(&nvshmem.jit, kernel_name, arch)?.link(&ir, nvshmem)?;
        Ok(Compiled { cubin, log, usage: Usage::default() })
    })
}

/// nvJitLink must be at least as new as the NVRTC whose LTO-IR it links.
fn check_nvjitlink(nvshmem: &Nvshmem) -> Result<()> {
    let (nvrtc_major, nvrtc_minor) = nvrtc_version()?;
    let (major, minor) = nvshmem.nvjitlink_version();
    let nvrtc = (u32::try_from(nvrtc_major).unwrap_or(0), u32::try_from(nvrtc_minor).unwrap_or(0));
    if major != nvrtc.0 || minor < nvrtc.1 {
        return Err(Error::NvJitLinkUnavailable {
            problem: format!(
                "{} is version {major}.{minor}, but the NVRTC that compiles kernels is {}.{}, and nvJitLink \
                 must be of the same major version and at least as new",
                nvshmem.nvjitlink().display(),
                nvrtc.0,
                nvrtc.1
            ),
            searched: vec![nvshmem.nvjitlink().to_owned()],
        });
    }
    Ok(())
}

/// An nvJitLink handle for one kernel, destroyed on drop.
struct Linker<'a> {
    api: &'a JitLinkApi,
    handle: JitLinkHandle,
    kernel: &'a str,
}

impl<'a> Linker<'a> {
    fn new(api: &'a JitLinkApi, kernel: &'a str, (major, minor): (u32, u32)) -> Result<Self> {
        let options = [format!("-arch=sm_{major}{minor}"), "-lto".to_owned()];
        let options: Vec<CString> = options.into_iter().filter_map(|option| CString::new(option).ok()).collect();
        let pointers: Vec<*const c_char> = options.iter().map(|option| option.as_ptr()).collect();
        let mut handle: JitLinkHandle = std::ptr::null_mut();
        // SAFETY: `handle` is valid for writes and `pointers` holds `len` C strings that live
        // through the call.
        let result = unsafe { (api.create)(&mut handle, pointers.len() as u32, pointers.as_ptr()) };
        if result != 0 || handle.is_null() {
            return Err(Error::Link { kernel: kernel.to_owned(), call: "nvJitLinkCreate", result, log: String::new() });
        }
        Ok(Linker { api, handle, kernel })
    }

    /// Links `ir` with NVSHMEM's device library into a CUBIN.
    fn link(&self, ir: &[u8], nvshmem: &Nvshmem) -> Result<Vec<u8>> {
        let name = CString::new(format!("{}.ltoir", self.kernel.replace('\0', ""))).unwrap_or_default();
        // SAFETY: the handle is live; `ir` and `name` outlive the call, which copies them.
        let added = unsafe {
            (self.api.add_data)(self.handle, INPUT_LTOIR, ir.as_ptr().cast::<c_void>(), ir.len(), name.as_ptr())
        };
        self.check("nvJitLinkAddData", added)?;
        let library = path_c_string(&nvshmem.device_library());
        // SAFETY: the handle is live; `library` is a C string that outlives the call.
        let added = unsafe { (self.api.add_file)(self.handle, INPUT_LIBRARY, library.as_ptr()) };
        self.check("nvJitLinkAddFile", added)?;
        // SAFETY: the handle is live.
        self.check("nvJitLinkComplete", unsafe { (self.api.complete)(self.handle) })?;
        let mut size = 0usize;
        // SAFETY: the handle is live and complete; `size` is valid for writes.
        self.check("nvJitLinkGetLinkedCubinSize", unsafe { (self.api.cubin_size)(self.handle, &mut size) })?;
        let mut cubin = vec![0u8; size];
        // SAFETY: `cubin` has the `size` bytes nvJitLink asked for.
        self.check("nvJitLinkGetLinkedCubin", unsafe { (self.api.cubin)(self.handle, cubin.as_mut_ptr().cast()) })?;
        Ok(cubin)
    }

    fn check(&self, call: &'static str, result: i32) -> Result<()> {
        if result == 0 {
            return Ok(());
        }
        Err(Error::Link { kernel: self.kernel.to_owned(), call, result, log: self.logs() })
    }

    /// The error log, then the info log, each when not empty.
    fn logs(&self) -> String {
        let error = self.log(self.api.error_log_size, self.api.error_log);
        let info = self.log(self.api.info_log_size, self.api.info_log);
        [error, info].into_iter().filter(|log| !log.is_empty()).collect::<Vec<_>>().join("\n")
    }

    fn log(
        &self,
        size_of: unsafe extern "C" fn(JitLinkHandle, *mut usize) -> i32,
        read: unsafe extern "C" fn(JitLinkHandle, *mut c_char) -> i32,
    ) -> String {
        let mut size = 0usize;
        // SAFETY: the handle is live; `size` is valid for writes.
        if unsafe { size_of(self.handle, &mut size) } != 0 || size == 0 {
            return String::new();
        }
        let mut bytes = vec![0u8; size + 1];
        // SAFETY: `bytes` has room for the `size` bytes nvJitLink announced, and a NUL.
        if unsafe { read(self.handle, bytes.as_mut_ptr().cast()) } != 0 {
            return String::new();
        }
        let end = bytes.iter().position(|&byte| byte == 0).unwrap_or(bytes.len());
        String::from_utf8_lossy(&bytes[..end]).trim_end().to_owned()
    }
}

impl Drop for Linker<'_> {
    fn drop(&mut self) {
        // SAFETY: created by `create` and destroyed only here; a failure would only leak it.
        let _ = unsafe { (self.api.destroy)(&mut self.handle) };
    }
}

fn path_c_string(path: &std::path::Path) -> CString {
    use std::os::unix::ffi::OsStrExt;
    // A path from the file system holds no NUL byte.
    CString::new(path.as_os_str().as_bytes()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::nvshmem::library::nvshmem_or_skip;

    /// Calls each NVSHMEM device function a spanning barrier may use.
    const TEAM_KERNEL: &str = r#"
#include <nvshmem.h>
#include <nvshmemx.h>
extern "C" __global__ void team_probe(int* sym, unsigned long long* sig, int* out) {
    const int me = nvshmem_my_pe(), n = nvshmem_n_pes();
    const int peer = (me + 1) % n;
    int* remote = (int*)nvshmem_ptr(sym, peer);
    if (remote != nullptr) out[0] = 1;
    nvshmem_int_p(sym, me, peer);
    nvshmem_fence();
    nvshmemx_signal_op((uint64_t*)sig, 1, NVSHMEM_SIGNAL_SET, peer);
    nvshmem_signal_wait_until((uint64_t*)sig, NVSHMEM_CMP_GE, 1);
}
"#;

    fn contains(haystack: &[u8], needle: &[u8]) -> bool {
        haystack.windows(needle.len()).any(|window| window == needle)
    }

    #[test]
    fn a_kernel_calling_nvshmem_links_into_a_cubin_with_nvshmems_device_state() {
        let Some(nvshmem) = nvshmem_or_skip() else {
            return;
        };
        let compiled =
            link_kernel(nvshmem, TEAM_KERNEL, "team_probe", (9, 0)).unwrap_or_else(|error| panic!("{error}"));
        assert_eq!(&compiled.cubin[..4], b"\x7fELF", "a CUBIN is an ELF file");
        assert!(contains(&compiled.cubin, b"team_probe\0"));
        assert!(contains(&compiled.cubin, b"nvshmemi_device_state_d\0"), "the state NVSHMEM initialises");
    }

    #[test]
    fn a_call_to_an_undefined_function_is_a_link_error_with_the_log() {
        let Some(nvshmem) = nvshmem_or_skip() else {
            return;
        };
        let source = "extern \"C\" __device__ int gsync_missing(int);\n\
                      extern \"C\" __global__ void broken(int* out) { out[0] = gsync_missing(out[1]); }\n";
        match link_kernel(nvshmem, source, "broken", (9, 0)) {
            Err(Error::Link { kernel, log, .. }) => {
                assert_eq!(kernel, "broken");
                assert!(log.contains("gsync_missing"), "the log names the symbol: {log}");
            }
            other => panic!("expected a link error, got {other:?}"),
        }
    }

    #[test]
    fn a_syntax_error_is_an_nvrtc_compile_error() {
        let Some(nvshmem) = nvshmem_or_skip() else {
            return;
        };
        let source = "#include <nvshmem.h>\nextern \"C\" __global__ void broken() {\n    int x = ;\n}\n";
        assert!(matches!(link_kernel(nvshmem, source, "broken", (9, 0)), Err(Error::Compile { .. })));
    }
}
