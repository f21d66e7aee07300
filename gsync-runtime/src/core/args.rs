//! The arguments of one launch: one 8-byte slot per C parameter, and the buffers behind them.

use std::any::Any;

use crate::core::dynamic_shared::DynamicShared;
use crate::core::scalar::{from_slot_bytes, slot_bytes, KernelScalar};

pub(crate) mod sealed {
    /// Keeps [`KernelBuffer`](super::KernelBuffer) to this crate's buffers.
    pub trait Buffer {}
}

/// Memory a kernel argument can point at: implemented by
/// [`DeviceBuffer`](crate::DeviceBuffer). Sealed.
pub trait KernelBuffer: sealed::Buffer + Sync {
    /// The number of elements.
    fn len(&self) -> usize;
    /// The size of one element in bytes.
    fn element_bytes(&self) -> usize;
    /// Whether the buffer has no elements.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The device address of the first element; `None` for memory of the CPU emulator.
    fn device_address(&self) -> Option<u64>;
    /// The ordinal of the GPU whose memory holds the buffer; 0 on the emulator.
    fn gpu_ordinal(&self) -> usize;
    /// The elements as the emulator's threads share them (an `EmuSlice<T>`); `None` for
    /// device memory.
    fn emulated(&self) -> Option<&(dyn Any + Send + Sync)>;
    /// Every PE's elements of a symmetric buffer of an emulated team (a `TeamSlices<T>`);
    /// `None` for any other buffer.
    fn emulated_team(&self) -> Option<&(dyn Any + Send + Sync)>;

    /// Whether every PE of a team allocated it together (`Gpu::symmetric_zeros`).
    fn is_symmetric(&self) -> bool;
}

/// One kernel parameter as the driver reads it: up to 8 bytes, little-endian, zero-padded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C, align(8))]
pub(crate) struct Slot(pub [u8; 8]);

/// The arguments of one launch, one 8-byte slot per C parameter, borrowing the buffers.
/// On the emulator, a split kernel's segment bodies read them back by parameter number.
///
/// Buffers are borrowed for `'a` (mutably for `slice_mut`) so that Rust's aliasing rules hold
/// across the launch; [`Gpu::launch_kernel`](crate::Gpu::launch_kernel) waits for the kernel
/// before returning, and a [`SplitRun`](crate::split::SplitRun) waits for its launches before it
/// is gone, so the borrows outlive the device's use of the memory.
#[derive(Default)]
pub struct KernelArgs<'a> {
    slots: Vec<Slot>,
    /// Each argument as passed, in order, for the emulator and the buffer checks.
    params: Vec<Arg<'a>>,
    /// The kernel's shared slices for this call; the runtime lays them out per block size and
    /// passes their lengths and offsets after these arguments.
    shared: DynamicShared,
    /// The `#[symmetric]` parameters: argument number and name.
    symmetric: Vec<(usize, &'static str)>,
}

/// One argument of a launch.
enum Arg<'a> {
    /// A slice, and whether the kernel may write it.
    Buffer(&'a dyn KernelBuffer, bool),
    Scalar(Slot),
}

impl<'a> KernelArgs<'a> {
    /// No arguments yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// A read-only slice: its device address, then its length as a `u64`.
    pub fn slice<B: KernelBuffer>(&mut self, buffer: &'a B) {
        self.push_buffer(buffer, false);
    }

    /// A slice the kernel may write: its device address, then its length as a `u64`.
    pub fn slice_mut<B: KernelBuffer>(&mut self, buffer: &'a mut B) {
        self.push_buffer(buffer, true);
    }

    /// Marks the buffer pushed last as the `#[symmetric]` parameter `name`: on a PE of a team,
    /// a buffer that is not symmetric is refused with
    /// [`Error::NotSymmetric`](crate::Error::NotSymmetric) before the launch.
    pub fn symmetric(&mut self, name: &'static str) {
        if let Some(last) = self.params.len().checked_sub(1) {
            self.symmetric.push((last, name));
        }
    }

    /// The `#[symmetric]` parameters' buffers, with their names.
    pub(crate) fn symmetric_buffers(&self) -> impl Iterator<Item = (&'static str, &'a dyn KernelBuffer)> + '_ {
        self.symmetric.iter().filter_map(|&(param, name)| Some((name, self.buffer(param)?)))
    }

    /// A value passed by value, in its own slot.
    pub fn scalar<T: KernelScalar>(&mut self, value: T) {
        let slot = Slot(slot_bytes(value));
        self.slots.push(slot);
        self.params.push(Arg::Scalar(slot));
    }

    /// The call's shared slices (`shared_slice::<T>(len)`): the runtime computes their layout
    /// for the launch's block size, and passes each one's length and offset after the
    /// arguments pushed here.
    pub fn dynamic_shared(&mut self, shared: DynamicShared) {
        self.shared = shared;
    }

    /// The call's shared slices.
    pub(crate) fn shared(&self) -> &DynamicShared {
        &self.shared
    }

    /// The parameter slots, in order.
    pub(crate) fn slots(&self) -> &[Slot] {
        &self.slots
    }

    /// Argument `param`, if it is a buffer.
    pub(crate) fn buffer(&self, param: usize) -> Option<&'a dyn KernelBuffer> {
        match self.params.get(param) {
            Some(&Arg::Buffer(buffer, _)) => Some(buffer),
            _ => None,
        }
    }

    /// Argument `param`, if it is a value, read back from its slot as a `T`.
    pub(crate) fn value<T: KernelScalar>(&self, param: usize) -> Option<T> {
        match self.params.get(param) {
            Some(Arg::Scalar(slot)) => Some(from_slot_bytes(slot.0)),
            _ => None,
        }
    }

    /// The buffers, in order.
    pub(crate) fn buffers(&self) -> impl Iterator<Item = &'a dyn KernelBuffer> + '_ {
        self.params.iter().filter_map(|arg| match *arg {
            Arg::Buffer(buffer, _) => Some(buffer),
            Arg::Scalar(_) => None,
        })
    }

    /// The buffers the kernel may write, in order.
    pub(crate) fn mutable_buffers(&self) -> impl Iterator<Item = &'a dyn KernelBuffer> + '_ {
        self.params.iter().filter_map(|arg| match *arg {
            Arg::Buffer(buffer, true) => Some(buffer),
            Arg::Buffer(_, false) | Arg::Scalar(_) => None,
        })
    }

    /// The same arguments with the buffers the kernel may write replaced, in order, by
    /// `replacements` (one per [`mutable_buffers`](Self::mutable_buffers) item, of the same
    /// length): a launch on copies, which leaves the originals untouched.
    pub(crate) fn with_mutable_replaced<'b>(&self, replacements: &[&'b dyn KernelBuffer]) -> KernelArgs<'b>
    where
        'a: 'b,
    {
        let mut replaced = KernelArgs { shared: self.shared.clone(), ..KernelArgs::new() };
        let mut replacements = replacements.iter();
        for arg in &self.params {
            match *arg {
                Arg::Buffer(buffer, true) => {
                    let copy = replacements.next().copied().unwrap_or(buffer);
                    debug_assert_eq!(copy.len(), buffer.len());
                    replaced.push_buffer(copy, true);
                }
                Arg::Buffer(buffer, false) => replaced.push_buffer(buffer, false),
                Arg::Scalar(slot) => {
                    replaced.slots.push(slot);
                    replaced.params.push(Arg::Scalar(slot));
                }
            }
        }
        replaced
    }

    /// The length of the longest buffer: what a launch's size class is measured by.
    pub(crate) fn longest_buffer(&self) -> usize {
        self.buffers().map(|buffer| buffer.len()).max().unwrap_or(0)
    }

    fn push_buffer(&mut self, buffer: &'a dyn KernelBuffer, mutable: bool) {
        self.params.push(Arg::Buffer(buffer, mutable));
        // An emulator buffer has no device address; a device launch refuses it before using
        // the 0.
        self.push_slice_parts(buffer.device_address().unwrap_or(0), buffer.len());
    }

    fn push_slice_parts(&mut self, address: u64, len: usize) {
        self.slots.push(Slot(address.to_le_bytes()));
        self.slots.push(Slot(slot_bytes(len)));
    }
}

impl std::fmt::Debug for KernelArgs<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KernelArgs").field("slots", &self.slots).finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars_take_one_slot_each() {
        let mut args = KernelArgs::new();
        args.scalar(7u8);
        args.scalar(true);
        args.scalar(-1i32);
        args.scalar(2.5f64);
        args.scalar(3usize);
        let slots: Vec<[u8; 8]> = args.slots().iter().map(|slot| slot.0).collect();
        assert_eq!(
            slots,
            [
                [7, 0, 0, 0, 0, 0, 0, 0],
                [1, 0, 0, 0, 0, 0, 0, 0],
                [0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0],
                2.5f64.to_le_bytes(),
                [3, 0, 0, 0, 0, 0, 0, 0],
            ]
        );
        assert_eq!(args.value::<i32>(2), Some(-1));
        assert!(args.buffer(0).is_none());
    }

    #[test]
    fn a_slice_is_an_address_slot_then_a_u64_length_slot() {
        let mut args = KernelArgs::new();
        args.push_slice_parts(0x7f00_0000_1000, 42);
        args.scalar(1u16);
        let slots: Vec<[u8; 8]> = args.slots().iter().map(|slot| slot.0).collect();
        assert_eq!(slots, [0x7f00_0000_1000u64.to_le_bytes(), 42u64.to_le_bytes(), [1, 0, 0, 0, 0, 0, 0, 0]]);
    }

    #[test]
    fn slots_are_eight_bytes_and_eight_aligned() {
        assert_eq!(size_of::<Slot>(), 8);
        assert_eq!(align_of::<Slot>(), 8);
    }
}
