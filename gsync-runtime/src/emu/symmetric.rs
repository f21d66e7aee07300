//! A symmetric slice as an emulated kernel sees it: this PE's elements, read and written like
//! any slice's, and every other PE's, reached with `put`, `get` and `put_range`.

use std::ops::Deref;
use std::sync::Arc;

use crate::core::error::{Error, Result};
use crate::emu::memory::EmuSlice;
use crate::emu::scalar::EmuScalar;
use crate::emu::team::{Rendezvous, Step, TeamMember};
use crate::emu::thread::ThreadCtx;

/// The memory of a symmetric buffer of an emulated team: one slice per PE, shared by the
/// team's PEs, each of which holds it as PE `pe`.
pub(crate) struct TeamSlices<T: EmuScalar> {
    every_pe: Arc<[Arc<EmuSlice<T>>]>,
    pe: usize,
    /// The team's meeting point, which names the team.
    team: Arc<Rendezvous>,
}

impl<T: EmuScalar> TeamSlices<T> {
    /// The slices of every PE, by PE, held by PE `pe` of `team`.
    pub(crate) fn new(every_pe: Arc<[Arc<EmuSlice<T>>]>, pe: usize, team: Arc<Rendezvous>) -> Self {
        TeamSlices { every_pe, pe, team }
    }

    /// Whether `member` is the PE that holds these slices, in their team.
    pub(crate) fn held_by(&self, member: Option<&TeamMember>) -> bool {
        member.is_some_and(|member| member.pe() as usize == self.pe && member.in_team(&self.team))
    }

    /// The PE that holds these slices.
    pub(crate) fn pe(&self) -> usize {
        self.pe
    }

    /// This PE's slice.
    pub(crate) fn local(&self) -> &EmuSlice<T> {
        &self.every_pe[self.pe]
    }

    /// The view a kernel on this PE has.
    pub(crate) fn view(&self) -> EmuSymmetric<'_, T> {
        EmuSymmetric { every_pe: Some(&self.every_pe), local: self.local() }
    }
}

/// One symmetric slice of every PE of a team, seen from one PE: it dereferences to this PE's
/// slice. A buffer of a GPU that is in no team is the one slice of a team of one.
#[doc(hidden)]
pub struct EmuSymmetric<'g, T: EmuScalar> {
    every_pe: Option<&'g [Arc<EmuSlice<T>>]>,
    local: &'g EmuSlice<T>,
}

impl<T: EmuScalar> std::fmt::Debug for EmuSymmetric<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n_pes = self.every_pe.map_or(1, <[_]>::len);
        f.debug_struct("EmuSymmetric").field("len", &self.local.len()).field("n_pes", &n_pes).finish()
    }
}

impl<T: EmuScalar> Clone for EmuSymmetric<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T: EmuScalar> Copy for EmuSymmetric<'_, T> {}

impl<'g, T: EmuScalar> EmuSymmetric<'g, T> {
    /// A slice of a GPU in no team, as the symmetric slice of a team of one.
    pub(crate) fn alone(local: &'g EmuSlice<T>) -> Self {
        EmuSymmetric { every_pe: None, local }
    }

    /// Element `index` of PE `pe`'s slice (`a.get(pe, i)`): a relaxed atomic load. A PE out
    /// of the team records the fault, as an index out of bounds does, and reads zero.
    #[inline]
    pub fn get(&self, pe: u64, index: u64, ctx: &ThreadCtx<'_>, array: u32, line: u32) -> T {
        match self.on(pe, ctx, array, line) {
            Some(slice) => slice.load_relaxed(index, ctx, array, line),
            None => T::default(),
        }
    }

    /// Writes element `index` of PE `pe`'s slice (`a.put(pe, i, v)`): a relaxed atomic store,
    /// which the next `grid_sync()` makes visible to PE `pe`. A PE out of the team records
    /// the fault and writes nothing.
    #[inline]
    pub fn put(&self, pe: u64, index: u64, value: T, ctx: &ThreadCtx<'_>, array: u32, line: u32) {
        if let Some(slice) = self.on(pe, ctx, array, line) {
            slice.store_relaxed(index, value, ctx, array, line);
        }
    }

    /// Writes element `index` of PE `pe`'s slice with release ordering (`a.signal(pe, i, v)`):
    /// what this thread wrote or saw before is visible to a thread of PE `pe` that reads the
    /// value with `load_signal`. A PE out of the team records the fault and writes nothing.
    #[inline]
    pub fn signal(&self, pe: u64, index: u64, value: T, ctx: &ThreadCtx<'_>, array: u32, line: u32) {
        if let Some(slice) = self.on(pe, ctx, array, line) {
            slice.store_release(index, value, ctx, array, line);
        }
    }

    /// This thread's share of its block's `a.put_range(pe, at, &source[lo..hi])`: elements
    /// `thread_idx()`, `thread_idx() + block_dim()`, … of the range, each written as `put`
    /// writes one. A PE out of the team, a range that is not one of `source` (`lo > hi`, or
    /// `hi` past its end) or that does not fit from `at` records the fault, checked in every
    /// launch as every access of the emulator is, and nothing is copied. The caller then waits
    /// at the block barrier, which ends the copy.
    pub fn put_range(&self, put: EmuRangePut, source: &EmuSlice<T>, ctx: &ThreadCtx<'_>) {
        let Some(peer) = self.on(put.pe, ctx, put.target, put.line) else { return };
        if !source.range_in_bounds(put.lo, put.hi, ctx, put.source, put.line) {
            return;
        }
        let n = put.hi - put.lo;
        if !peer.span_in_bounds(put.at, n, ctx, put.target, put.line) {
            return;
        }
        for i in (u64::from(ctx.thread_idx())..n).step_by(ctx.block_dim() as usize) {
            let value = source.load(put.lo + i, ctx, put.source, put.line);
            peer.store_relaxed(put.at + i, value, ctx, put.target, put.line);
        }
    }

    fn on(&self, pe: u64, ctx: &ThreadCtx<'_>, array: u32, line: u32) -> Option<&'g EmuSlice<T>> {
        let (slice, n_pes) = match self.every_pe {
            Some(every_pe) => {
                (usize::try_from(pe).ok().and_then(|pe| every_pe.get(pe)).map(|slice| &**slice), every_pe.len())
            }
            None => ((pe == 0).then_some(self.local), 1),
        };
        if slice.is_none() {
            ctx.no_such_pe(array, pe, u32::try_from(n_pes).unwrap_or(u32::MAX), line);
        }
        slice
    }
}

/// The operands of a block's `a.put_range(pe, at, &source[lo..hi])`, the same in each of its
/// threads, and what names the statement in a fault.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EmuRangePut {
    pub pe: u64,
    pub at: u64,
    pub lo: u64,
    pub hi: u64,
    /// The kernel's numbers of `a` and of `source`.
    pub target: u32,
    pub source: u32,
    /// The Rust line of the call.
    pub line: u32,
}

impl<T: EmuScalar> Deref for EmuSymmetric<'_, T> {
    type Target = EmuSlice<T>;

    fn deref(&self) -> &EmuSlice<T> {
        self.local
    }
}

/// The view a kernel of `kernel` on PE `member` (`None`: a GPU in no team) has of the buffer
/// passed for `#[symmetric]` parameter `param`: every PE's slices, `team`, when the buffer
/// is symmetric, else its one slice, `alone`, as that of a team of one. Fails with
/// [`Error::NotSymmetric`] for a buffer that is not symmetric on a PE of a team of more than
/// one, and with [`Error::BufferOnOtherGpu`] for another PE's part or another team's, which
/// reaches other memory than a GPU would.
pub(crate) fn symmetric_view<'g, T: EmuScalar>(
    team: Option<&'g TeamSlices<T>>,
    alone: &'g EmuSlice<T>,
    member: Option<&TeamMember>,
    kernel: &str,
    param: &str,
) -> Result<EmuSymmetric<'g, T>> {
    match team {
        None if member.is_some_and(|member| member.n_pes() > 1) => {
            Err(Error::NotSymmetric { kernel: kernel.to_owned(), param: param.to_owned() })
        }
        None => Ok(EmuSymmetric::alone(alone)),
        Some(slices) if !slices.held_by(member) => Err(Error::BufferOnOtherGpu {
            kernel: kernel.to_owned(),
            buffer_gpu: slices.pe(),
            launch_gpu: member.map_or(0, |member| member.pe() as usize),
        }),
        Some(slices) => Ok(slices.view()),
    }
}

/// Allocates a symmetric buffer on PE `member`, with `local` as its elements: every PE of the
/// team hands in its own slice, and gets every PE's. PEs that allocate different lengths or
/// element types, or do something else, fail alike with
/// [`Error::TeamMismatch`](crate::Error::TeamMismatch).
pub(crate) fn allocate_symmetric<T: EmuScalar + 'static>(
    member: &TeamMember,
    local: EmuSlice<T>,
) -> Result<TeamSlices<T>> {
    let elem = std::any::type_name::<T>().rsplit("::").next().unwrap_or("elements");
    let step = Step::Allocate { number: member.next_allocation(), elem, len: local.len() };
    let local: Arc<EmuSlice<T>> = Arc::new(local);
    // PEs allocate apart by whatever host work each does in between: no limit but a PE that
    // leaves.
    let round = member.exchange(step, Some(local), None)?;
    let every_pe: Vec<Arc<EmuSlice<T>>> = round
        .iter()
        .map(|c| c.payload.clone().and_then(|payload| payload.downcast::<EmuSlice<T>>().ok()))
        .collect::<Option<_>>()
        .ok_or_else(|| Error::InvalidTeam { reason: "a PE handed in no memory for a symmetric buffer".into() })?;
    Ok(TeamSlices::new(every_pe.into(), member.pe() as usize, member.rendezvous()))
}
