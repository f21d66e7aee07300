//! Dynamic shared memory: a kernel's shared slices (`shared_slice::<T>(len)`), whose lengths a
//! call's arguments and block size decide, laid out one after another in the block's one
//! `extern __shared__` buffer.
//!
//! The generated code computes the lengths on the host, from the same expressions the kernel
//! declares, with Rust's checked arithmetic ([`DynamicShared`]); the runtime lays them out
//! ([`SharedLayout`]), checks the bytes against the device, asks the occupancy for them, and
//! passes each slice's length and byte offset to the kernel as parameters. The kernel never
//! computes a length itself, so the host and the device cannot disagree about one.

use std::fmt;
use std::sync::Arc;

use crate::core::device::DeviceInfo;
use crate::core::error::{Error, Result};
use crate::core::kernel::KernelSpec;

/// One shared slice of a kernel, as `#[grid_phases]` describes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SharedSlice {
    /// The slice's Rust name.
    pub name: &'static str,
    /// The Rust line of its declaration.
    pub line: u32,
    /// The size of one element in bytes, which is also its alignment.
    pub elem_bytes: u32,
}

/// Why a slice's length could not be computed: the slice's index among the kernel's, and what
/// failed (e.g. "`*` overflows `u32`").
pub type LengthFault = (usize, &'static str);

/// The slices' lengths for a block size, in declaration order.
type LengthsFn = dyn Fn(u32) -> std::result::Result<Vec<u64>, LengthFault> + Send + Sync;

/// A kernel's shared slices for one call: their descriptions, the kernel's static shared bytes,
/// and their lengths as a function of the block size. Generated code builds one from the
/// call's arguments; a kernel without shared slices has [`DynamicShared::none`].
#[derive(Clone)]
pub struct DynamicShared {
    slices: &'static [SharedSlice],
    static_bytes: u64,
    lengths: Option<Arc<LengthsFn>>,
}

impl DynamicShared {
    /// No shared slices: no dynamic shared memory.
    pub const fn none() -> DynamicShared {
        DynamicShared { slices: &[], static_bytes: 0, lengths: None }
    }

    /// The shared slices `slices` of a kernel with `static_bytes` of static shared arrays,
    /// whose lengths for a block size `lengths` computes, one per slice, in order.
    pub fn new<F>(slices: &'static [SharedSlice], static_bytes: u32, lengths: F) -> DynamicShared
    where
        F: Fn(u32) -> std::result::Result<Vec<u64>, LengthFault> + Send + Sync + 'static,
    {
        DynamicShared { slices, static_bytes: u64::from(static_bytes), lengths: Some(Arc::new(lengths)) }
    }

    /// Whether the kernel has no shared slice.
    pub fn is_empty(&self) -> bool {
        self.slices.is_empty()
    }

    /// The slices laid out for blocks of `threads` threads, or why they cannot be.
    pub(crate) fn layout(&self, kernel: &KernelSpec, threads: u32) -> Result<SharedLayout> {
        let Some(lengths) = &self.lengths else {
            return Ok(SharedLayout::default());
        };
        let lens = lengths(threads).map_err(|(slice, reason)| self.length_error(kernel, slice, threads, reason))?;
        let layout = SharedLayout::new(self.slices, lens).map_err(|slice| {
            self.length_error(kernel, slice, threads, "the shared slices' bytes together overflow a u64")
        })?;
        Ok(SharedLayout { static_bytes: self.static_bytes, ..layout })
    }

    fn length_error(&self, kernel: &KernelSpec, slice: usize, threads: u32, reason: &str) -> Error {
        let (name, line) = self.slices.get(slice).map_or(("?", 0), |slice| (slice.name, slice.line));
        Error::SharedSliceLength {
            kernel: kernel.name.to_owned(),
            slice: name.to_owned(),
            line,
            threads,
            reason: reason.to_owned(),
        }
    }
}

impl Default for DynamicShared {
    fn default() -> Self {
        DynamicShared::none()
    }
}

impl fmt::Debug for DynamicShared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DynamicShared")
            .field("slices", &self.slices)
            .field("static_bytes", &self.static_bytes)
            .finish_non_exhaustive()
    }
}

/// Where each shared slice starts: a multiple of 16 bytes, the widest chunk access.
const SLICE_ALIGN: u64 = 16;

/// The shared slices of one launch in the `extern __shared__` buffer: each slice's length and
/// byte offset (rounded up to 16 bytes, so that chunks of every slice are aligned; see
/// `load_chunk` in docs/dsl.md), and the bytes of the whole buffer.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct SharedLayout {
    /// Elements of each slice, in declaration order.
    pub lens: Vec<u64>,
    /// Byte offset of each slice in the buffer.
    pub offsets: Vec<u64>,
    /// The buffer's bytes: the launch's dynamic shared memory.
    pub bytes: u64,
    /// The kernel's static shared bytes as the macro counted them (the emulator's; a GPU's
    /// come from the compiled kernel).
    pub static_bytes: u64,
    /// The kernel's parameters for the slices: each one's length, then its offset.
    pub params: Vec<u64>,
}

impl SharedLayout {
    /// Lays out `slices` of `lens` elements, in order; the index of the slice whose end
    /// overflows, if one does.
    fn new(slices: &[SharedSlice], lens: Vec<u64>) -> std::result::Result<SharedLayout, usize> {
        let mut offsets = Vec::with_capacity(lens.len());
        let mut end = 0u64;
        for (index, (slice, &len)) in slices.iter().zip(&lens).enumerate() {
            let elem_bytes = u64::from(slice.elem_bytes.max(1));
            let offset = end.checked_next_multiple_of(SLICE_ALIGN).ok_or(index)?;
            end = len.checked_mul(elem_bytes).and_then(|bytes| offset.checked_add(bytes)).ok_or(index)?;
            offsets.push(offset);
        }
        let params = lens.iter().zip(&offsets).flat_map(|(&len, &offset)| [len, offset]).collect();
        Ok(SharedLayout { lens, offsets, bytes: end, static_bytes: 0, params })
    }

    /// The bytes of the launch's dynamic shared memory, as the driver takes them.
    pub fn driver_bytes(&self) -> u32 {
        // `check_dynamic_shared` refused anything above the device's limit, a u32.
        u32::try_from(self.bytes).unwrap_or(u32::MAX)
    }
}

/// Refuses shared slices of `layout.bytes` that do not fit beside `static_bytes` of static
/// shared memory in the most a block of `info`'s GPU can opt into.
pub(crate) fn check_dynamic_shared(
    kernel: &KernelSpec,
    info: &DeviceInfo,
    threads: u32,
    static_bytes: u64,
    layout: &SharedLayout,
) -> Result<()> {
    let max = u64::from(info.max_shared_memory_per_block_optin.max(info.max_shared_memory_per_block));
    if layout.bytes == 0 || static_bytes.saturating_add(layout.bytes) <= max {
        return Ok(());
    }
    Err(Error::DynamicSharedMemoryLimit {
        kernel: kernel.name.to_owned(),
        dynamic: layout.bytes,
        static_bytes,
        max,
        threads,
        gpu: info.name.clone(),
    })
}

/// A size class of dynamic shared bytes (⌈log₂⌉, 0 for none), for the configuration cache: a
/// configuration tuned for small tiles is not the one for tiles a hundred times larger.
pub(crate) fn shared_class(bytes: u64) -> u32 {
    if bytes == 0 {
        0
    } else {
        1 + bytes.checked_next_power_of_two().map_or(64, u64::trailing_zeros)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::kernel::tests::SMOOTH;
    use crate::test_support::h200;

    const SLICES: &[SharedSlice] = &[
        SharedSlice { name: "flags", line: 3, elem_bytes: 1 },
        SharedSlice { name: "sums", line: 4, elem_bytes: 8 },
        SharedSlice { name: "keys", line: 5, elem_bytes: 4 },
    ];

    #[test]
    fn each_slice_starts_at_a_multiple_of_16_bytes() {
        // 3 flags end at byte 3 and 2 sums at 32: chunks of 16 bytes of each slice are aligned.
        let layout = SharedLayout::new(SLICES, vec![3, 2, 5]).expect("fits");
        assert_eq!(layout.offsets, [0, 16, 32]);
        assert_eq!(layout.bytes, 52);
        assert_eq!(layout.params, [3, 0, 2, 16, 5, 32]);
        let empty = SharedLayout::new(SLICES, vec![0, 0, 1]).expect("fits");
        assert_eq!((empty.offsets, empty.bytes), (vec![0, 0, 0], 4));
    }

    #[test]
    fn lengths_follow_the_block_size_and_faults_name_the_slice() {
        let shared = DynamicShared::new(SLICES, 0, |threads| {
            if threads > 512 {
                return Err((1, "`*` overflows `u32`"));
            }
            Ok(vec![u64::from(threads), u64::from(threads) / 32, 2 * u64::from(threads)])
        });
        let layout = shared.layout(&SMOOTH, 256).expect("fits");
        assert_eq!(layout.lens, [256, 8, 512]);
        assert_eq!(layout.bytes, 256 + 64 + 2048);
        let error = shared.layout(&SMOOTH, 1024).expect_err("overflows");
        assert!(
            matches!(&error, Error::SharedSliceLength { slice, line: 4, threads: 1024, .. } if slice == "sums"),
            "{error}"
        );
        assert!(error.to_string().contains("`*` overflows `u32`"), "{error}");
    }

    #[test]
    fn bytes_that_overflow_are_a_typed_error_not_a_wrap() {
        let shared = DynamicShared::new(SLICES, 0, |_| Ok(vec![1, u64::MAX / 4, 1]));
        let error = shared.layout(&SMOOTH, 32).expect_err("overflows");
        assert!(matches!(&error, Error::SharedSliceLength { slice, .. } if slice == "sums"), "{error}");
    }

    #[test]
    fn no_slices_need_no_bytes() {
        let layout = DynamicShared::none().layout(&SMOOTH, 1024).expect("nothing to lay out");
        assert_eq!(layout, SharedLayout::default());
        assert!(check_dynamic_shared(&SMOOTH, &h200(), 1024, 48 * 1024, &layout).is_ok());
    }

    #[test]
    fn slices_beyond_the_opt_in_maximum_beside_the_static_arrays_are_refused() {
        let info = h200();
        let layout = |bytes| SharedLayout {
            lens: vec![bytes],
            offsets: vec![0],
            bytes,
            static_bytes: 0,
            params: vec![bytes, 0],
        };
        assert!(check_dynamic_shared(&SMOOTH, &info, 256, 0, &layout(227 * 1024)).is_ok());
        assert!(check_dynamic_shared(&SMOOTH, &info, 256, 1024, &layout(226 * 1024)).is_ok());
        let error = check_dynamic_shared(&SMOOTH, &info, 256, 1024, &layout(226 * 1024 + 1)).expect_err("too much");
        assert!(
            matches!(error, Error::DynamicSharedMemoryLimit { dynamic: 231425, static_bytes: 1024, max: 232448, .. }),
            "{error}"
        );
        let message = error.to_string();
        assert!(message.contains("231425 bytes of dynamic shared memory per block of 256 threads"), "{message}");
        assert!(message.contains("at most 232448 bytes") && message.contains("make the shared slices shorter"));
    }

    #[test]
    fn size_classes_tell_tile_sizes_apart() {
        assert_eq!(shared_class(0), 0);
        assert_eq!(shared_class(1), 1);
        assert_eq!(shared_class(4096), shared_class(4000));
        assert_ne!(shared_class(4096), shared_class(4097));
        assert_eq!(shared_class(u64::MAX), 65);
    }
}
