//! Static memory sizes that no CUDA GPU can give: caught here, on the array
//! that crosses the limit, instead of in ptxas at the first launch.

use crate::diagnostics::Diagnostics;
use crate::ir::*;

/// Static `__shared__` memory of one block: 48 KiB on every CUDA GPU (more
/// needs dynamic shared memory, which kernels do not use).
pub const SHARED_LIMIT: u64 = gsync_contract::MAX_STATIC_SHARED_BYTES as u64;

/// Local memory of one thread: 512 KiB on every CUDA GPU.
pub const LOCAL_LIMIT: u64 = 512 * 1024;

/// Where each shared array starts: `__align__(16)`, so that its chunks are aligned.
const SHARED_ALIGN: u64 = 16;

/// The bytes of a block's static shared arrays, which its shared slices share the block's
/// shared memory with.
pub fn static_shared_bytes(k: &Kernel) -> u64 {
    k.arrays.iter().filter(|a| a.space == ArraySpace::Shared).map(array_bytes).fold(0, u64::saturating_add)
}

/// The bytes an array takes: a shared array's rounded up to the next one's alignment.
fn array_bytes(a: &Array) -> u64 {
    let bytes = a.len.unwrap_or(0).saturating_mul(u64::from(a.elem.bits() / 8));
    match a.space {
        ArraySpace::Shared => bytes.checked_next_multiple_of(SHARED_ALIGN).unwrap_or(u64::MAX),
        _ => bytes,
    }
}

pub fn check(k: &Kernel, diag: &mut Diagnostics) {
    let mut shared = 0u64;
    let mut local = 0u64;
    for a in &k.arrays {
        let bytes = array_bytes(a);
        let (total, limit, what) = match a.space {
            // Sized at launch, and checked there against the device.
            ArraySpace::Global | ArraySpace::DynamicShared => continue,
            ArraySpace::Shared => (&mut shared, SHARED_LIMIT, "shared arrays of a block"),
            ArraySpace::Local => (&mut local, LOCAL_LIMIT, "arrays of a thread"),
        };
        let before = *total;
        *total = total.saturating_add(bytes);
        if before <= limit && *total > limit {
            let this = if before == 0 {
                String::new()
            } else {
                format!(" ({bytes} bytes for `{}` on top of {before} before it)", a.name)
            };
            let room = match a.space {
                ArraySpace::Shared => "static shared memory a CUDA block can have",
                _ => "local memory a CUDA thread can have",
            };
            diag.error(
                a.span,
                format!(
                    "the {what} need {} bytes{this}, more than the {limit} bytes ({} KiB) of {room}",
                    *total,
                    limit / 1024
                ),
            );
        }
    }
}
