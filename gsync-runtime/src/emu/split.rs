//! A split run ([`Barrier::MultiLaunch`]) on the emulator: the split kernel's generated host
//! code runs as on a GPU, and each segment launch is a grid run of its own, so nothing
//! but global memory survives from one segment to the next: every thread starts the segment
//! afresh, and each block's shared arrays are new (zeroed, as at the start of any emulated
//! launch, never what an earlier segment left there).

use std::time::Instant;

use crate::barrier::Barrier;
use crate::core::args::KernelArgs;
use crate::core::device::Backend;
use crate::core::error::{Error, Result};
use crate::core::grid::Grid;
use crate::core::kernel::KernelSpec;
use crate::core::launch::Launch;
use crate::core::launch::LaunchReport;
use crate::core::plan::LaunchPlan;
use crate::core::scalar::KernelScalar;
use crate::core::split::{check_read, missing_segment};
use crate::core::status::DeviceStatus;
use crate::emu::launch::{run, TeamLaunch};
use crate::emu::scalar::EmuScalar;
use crate::emu::team::LaunchPoint;
use crate::emu::{symmetric_view, EmuSlice, EmuSymmetric, Emulator, TeamSlices, ThreadCtx, ThreadFuture};

/// A segment of a split kernel as a CPU-emulator body: reads its arguments from `segment`
/// and runs its threads with [`EmuSegment::run`]. `#[grid_phases]` generates one per segment,
/// and hands them to the split run in segment order.
pub type EmuSegmentFn = fn(&EmuSegment<'_>) -> Result<()>;

/// One segment launch on the emulator, as the segment's generated body sees it: the arguments
/// the split form's host code passed, and the grid to run.
#[doc(hidden)]
pub struct EmuSegment<'r> {
    emulator: &'r Emulator,
    /// The run's plan: its grid, and its shared slices laid out.
    plan: &'r LaunchPlan,
    args: &'r KernelArgs<'r>,
}

impl<'r> EmuSegment<'r> {
    /// Threads per block of the run, which sizes the shared arrays sized by `BLOCK_SIZE`.
    pub fn block_size(&self) -> u32 {
        self.plan.grid.threads
    }

    /// Argument `param`, a slice of `T`, as the emulated threads share it.
    pub fn slice<T: EmuScalar>(&self, param: usize) -> Result<&'r EmuSlice<T>> {
        let buffer = self.args.buffer(param).ok_or_else(|| self.wrong_argument(param))?;
        let memory =
            buffer.emulated().ok_or(Error::BufferBackendMismatch { buffer: Backend::Cuda, gpu: Backend::Emulator })?;
        memory.downcast_ref().ok_or_else(|| self.wrong_argument(param))
    }

    /// Argument `param`, the buffer of `#[symmetric]` parameter `name`, as a symmetric slice
    /// seen from this PE; as [`DeviceBuffer::emu_symmetric`](crate::DeviceBuffer::emu_symmetric)
    /// for a fused launch: on a PE of a team of more than one, a buffer that is not symmetric
    /// is [`Error::NotSymmetric`].
    pub fn symmetric<T: EmuScalar>(&self, param: usize, name: &str) -> Result<EmuSymmetric<'r, T>> {
        let buffer = self.args.buffer(param).ok_or_else(|| self.wrong_argument(param))?;
        let team: Option<&'r TeamSlices<T>> = match buffer.emulated_team() {
            Some(team) => Some(team.downcast_ref().ok_or_else(|| self.wrong_argument(param))?),
            None => None,
        };
        symmetric_view(team, self.slice(param)?, self.emulator.team(), self.plan.kernel.name, name)
    }

    /// Argument `param`, a value of type `T`: the bytes a GPU would receive, read back.
    pub fn value<T: KernelScalar>(&self, param: usize) -> Result<T> {
        self.args.value(param).ok_or_else(|| self.wrong_argument(param))
    }

    /// Runs the segment's threads on the run's grid, like [`Gpu::emulate`]: `make_shared`
    /// builds a block's shared arrays for this launch, `body` one thread's future.
    pub fn run<S, MakeShared, Body>(&self, make_shared: MakeShared, body: Body) -> Result<()>
    where
        S: Sync,
        MakeShared: Fn() -> S,
        Body: for<'a> Fn(&'a ThreadCtx<'a>, &'a S) -> ThreadFuture<'a> + Sync,
    {
        run(self.emulator, self.plan, None, make_shared, body).map(drop)
    }

    /// [`run`](Self::run) for a kernel with shared slices: `make_shared` gets their lengths.
    pub fn run_shared<S, MakeShared, Body>(&self, make_shared: MakeShared, body: Body) -> Result<()>
    where
        S: Sync,
        MakeShared: Fn(&[u64]) -> S,
        Body: for<'a> Fn(&'a ThreadCtx<'a>, &'a S) -> ThreadFuture<'a> + Sync,
    {
        run(self.emulator, self.plan, None, || make_shared(&self.plan.shared.lens), body).map(drop)
    }

    fn wrong_argument(&self, param: usize) -> Error {
        let reason = format!("argument {param} of a segment launch is not what its body reads; this is a bug in gsync");
        Error::CannotSplit { kernel: self.plan.kernel.name.to_owned(), reason }
    }
}

impl std::fmt::Debug for EmuSegment<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmuSegment")
            .field("kernel", &self.plan.kernel.name)
            .field("args", self.args)
            .finish_non_exhaustive()
    }
}

/// A split run on the emulator; see [`SplitRun`](crate::split::SplitRun).
pub(crate) struct EmuSplitRun<'g> {
    emulator: &'g Emulator,
    /// The run's plan, for every segment.
    plan: LaunchPlan,
    /// The segments' emulator bodies, in segment order.
    bodies: &'static [EmuSegmentFn],
    started: Instant,
    /// The Rust line of a host loop's `step_by(0)`, the run's first fault (a segment's fault
    /// ends the run at its launch).
    zero_step: Option<u32>,
    /// On a PE of a team: the run as one of the PE's launches. The PEs meet at every
    /// `grid_sync()` the host code passes, as their grids meet at one, and at the end.
    team: Option<TeamLaunch<'g>>,
    /// The meetings at `grid_sync()` so far.
    crossings: u32,
}

impl<'g> EmuSplitRun<'g> {
    /// Starts the split run `planned` of `kernel`, whose segments run `bodies`; see
    /// [`Gpu::begin_split`](crate::Gpu::begin_split). On a PE of a team, it starts only when
    /// every PE's run can ([`Error::TeamRefused`] otherwise), as a fused launch does.
    pub(crate) fn begin(
        emulator: &'g Emulator,
        kernel: &KernelSpec,
        launch: &Launch,
        planned: Result<LaunchPlan>,
        bodies: &'static [EmuSegmentFn],
    ) -> Result<Self> {
        let team = emulator.team().map(TeamLaunch::next);
        let agreed = team.map_or(Ok(()), |team| team.agree_to_start(kernel, launch, planned.as_ref().err()));
        let plan = planned?;
        agreed?;
        Ok(EmuSplitRun { emulator, plan, bodies, started: Instant::now(), zero_step: None, team, crossings: 0 })
    }

    /// How long a meeting of the team waits for a PE: as long as a block may wait at a barrier.
    fn meeting_limit(&self) -> Option<std::time::Duration> {
        self.plan.launch.watchdog_limit().or(self.plan.launch.deadline_limit())
    }

    /// Meets the team at `point`, on a PE of a team.
    fn meet(&self, point: LaunchPoint) -> Result<()> {
        match &self.team {
            Some(team) => team.meet(&self.plan.kernel, point, self.meeting_limit()),
            None => Ok(()),
        }
    }

    pub(crate) fn grid(&self) -> Grid {
        self.plan.grid
    }

    pub(crate) fn kernel_name(&self) -> &'static str {
        self.plan.kernel.name
    }

    /// The run's PE and the team's size: `(0, 1)` outside a team.
    pub(crate) fn place(&self) -> (u32, u32) {
        self.emulator.team().map_or((0, 1), |member| (member.pe(), member.n_pes()))
    }

    /// Runs segment `segment` to the end: a grid run of its own.
    pub(crate) fn launch(&mut self, segment: usize, args: KernelArgs<'_>) -> Result<()> {
        let Some(body) = self.bodies.get(segment) else {
            return Err(missing_segment(&self.plan.kernel, segment, self.bodies.len()));
        };
        let ran = body(&EmuSegment { emulator: self.emulator, plan: &self.plan, args: &args });
        if let (Err(error), Some(team)) = (&ran, self.team) {
            // The run ends here, and meets the team no more: the other PEs hear why at their
            // next meeting.
            self.team = None;
            let _ =
                team.meet(&self.plan.kernel, LaunchPoint::Failed { error: error.to_string() }, self.meeting_limit());
        }
        ran
    }

    /// See [`SplitRun::grid_sync`](crate::split::SplitRun::grid_sync).
    pub(crate) fn grid_sync(&mut self) -> Result<()> {
        self.crossings += 1;
        self.meet(LaunchPoint::Crossing { number: self.crossings })
    }

    /// `buf[index]`, read by the host between segments.
    pub(crate) fn read<T: EmuScalar>(&self, buf: &EmuSlice<T>, index: u64, array: &str, line: u32) -> Result<T> {
        let index = check_read(&self.plan.kernel, buf.len(), index, array, line)?;
        let value = buf.get(index);
        // `check_read` keeps `index` below the length.
        Ok(value.unwrap_or_default())
    }

    /// See [`SplitRun::zero_step`](crate::split::SplitRun::zero_step).
    pub(crate) fn zero_step(&mut self, line: u32) {
        self.zero_step.get_or_insert(line);
    }

    /// The report, with the wall time from the start of the run; see
    /// [`SplitRun::finish`](crate::split::SplitRun::finish).
    pub(crate) fn finish(self) -> Result<LaunchReport> {
        self.meet(LaunchPoint::Finished)?;
        if let Some(line) = self.zero_step {
            DeviceStatus::zero_step(line).into_result(&self.plan.kernel, Barrier::MultiLaunch, None)?;
        }
        Ok(self.plan.report(self.started.elapsed(), None))
    }
}

#[cfg(test)]
mod tests {
    use std::marker::PhantomData;

    use super::*;
    use crate::core::dims::Axes;
    use crate::core::kernel::{KernelSpec, SplitSpec};
    use crate::core::launch::Launch;
    use crate::{DeviceBuffer, Gpu};

    /// `a[i] = i` in segment 0 and `b[i] = a[i] + a[n - 1 - i]` in segment 1, which reads
    /// what other blocks wrote in segment 0, with `n` a host value passed to segment 1. The
    /// shared array `tile` is written in segment 0 and read in segment 1, into `seen`.
    static TWO_SEGMENTS: KernelSpec = KernelSpec {
        name: "two_segments",
        symbol: "two_segments",
        rust_signature: "fn two_segments(a: &mut [u32], b: &mut [u32], seen: &mut [u32])",
        checked_body: "",
        unchecked_body: "",
        bounds_checks: true,
        profile: false,
        arrays: &["a", "b", "seen", "tile"],
        grid_syncs: 1,
        default_threads: 0,
        blocks_per_sm: 0,
        split: SplitSpec {
            checked_body: "",
            unchecked_body: "",
            segments: &["two_segments_segment_0", "two_segments_segment_1"],
            error: None,
            reads_device: false,
        },
        assertions: &[],
        axes: Axes::NONE,
        refused_block_sizes: &[],
    };

    /// The emulator bodies of `TWO_SEGMENTS`.
    static BODIES: [EmuSegmentFn; 2] = [segment_0, segment_1];

    struct Memory<'g> {
        a: &'g EmuSlice<u32>,
        b: &'g EmuSlice<u32>,
        seen: &'g EmuSlice<u32>,
        tile: EmuSlice<u32>,
        _kernel: PhantomData<&'g ()>,
    }

    fn segment_0(segment: &EmuSegment<'_>) -> Result<()> {
        let (a, b, seen) = (segment.slice::<u32>(0)?, segment.slice::<u32>(1)?, segment.slice::<u32>(2)?);
        let memory = || Memory { a, b, seen, tile: EmuSlice::zeroed(1), _kernel: PhantomData };
        segment.run(memory, |ctx: &ThreadCtx<'_>, memory: &Memory<'_>| {
            Box::pin(async move {
                let i = u64::from(ctx.global_id());
                if i < memory.a.len() as u64 {
                    memory.a.store(i, i as u32, ctx, 0, 1);
                }
                memory.tile.store(0, 7, ctx, 3, 2);
            })
        })
    }

    fn segment_1(segment: &EmuSegment<'_>) -> Result<()> {
        let (a, b, seen) = (segment.slice::<u32>(0)?, segment.slice::<u32>(1)?, segment.slice::<u32>(2)?);
        let n: u32 = segment.value(3)?;
        let memory = || Memory { a, b, seen, tile: EmuSlice::zeroed(1), _kernel: PhantomData };
        segment.run(memory, move |ctx: &ThreadCtx<'_>, memory: &Memory<'_>| {
            Box::pin(async move {
                let i = u64::from(ctx.global_id());
                if i < u64::from(n) {
                    let other = memory.a.load(u64::from(n) - 1 - i, ctx, 0, 3);
                    let mine = memory.a.load(i, ctx, 0, 3);
                    memory.b.store(i, mine + other, ctx, 1, 3);
                }
                if ctx.thread_idx() == 0 {
                    memory.seen.store(u64::from(ctx.block_idx()), memory.tile.load(0, ctx, 3, 4), ctx, 2, 4);
                }
            })
        })
    }

    /// The buffers of `TWO_SEGMENTS`.
    struct Buffers {
        a: DeviceBuffer<u32>,
        b: DeviceBuffer<u32>,
        seen: DeviceBuffer<u32>,
    }

    impl Buffers {
        fn new(gpu: &Gpu, n: usize) -> Buffers {
            let zeros = || gpu.zeros::<u32>(n).unwrap();
            Buffers { a: zeros(), b: zeros(), seen: gpu.upload(&[1u32; 4]).unwrap() }
        }

        fn args(&mut self) -> KernelArgs<'_> {
            let mut args = KernelArgs::new();
            args.slice_mut(&mut self.a);
            args.slice_mut(&mut self.b);
            args.slice_mut(&mut self.seen);
            args
        }
    }

    fn drive(gpu: &Gpu, launch: &Launch, buffers: &mut Buffers) -> Result<u32> {
        let n = buffers.a.len() as u32;
        let mut run = gpu.begin_split(&TWO_SEGMENTS, launch, &BODIES)?;
        // SAFETY: the arguments are segment 0's: `a`, `b`, `seen`.
        unsafe { run.launch(0, buffers.args())? };
        let mut args = buffers.args();
        args.scalar(n);
        // SAFETY: segment 1's: `a`, `b`, `seen`, then the host value `n`.
        unsafe { run.launch(1, args)? };
        let first = run.read(&buffers.b, 0, "b", 5)?;
        run.finish()?;
        Ok(first)
    }

    #[test]
    fn segments_run_in_order_as_separate_grids_and_share_only_global_memory() {
        let gpu = Gpu::emulator();
        let n = 100u32;
        let mut buffers = Buffers::new(&gpu, n as usize);
        let launch = Launch::new().barrier(Barrier::MultiLaunch).blocks(4).threads(32);
        let first = drive(&gpu, &launch, &mut buffers).unwrap();
        assert_eq!(gpu.download(&buffers.b).unwrap(), vec![n - 1; n as usize]);
        assert_eq!(first, n - 1, "the host reads what the segments wrote");
        assert_eq!(gpu.download(&buffers.seen).unwrap(), [0; 4], "shared memory starts afresh in every segment");
    }

    #[test]
    fn a_split_run_keeps_the_grid_limits_and_refusals_of_the_gpu() {
        let gpu = Gpu::emulator();
        let launch = Launch::new().barrier(Barrier::MultiLaunch);
        let run = gpu.begin_split(&TWO_SEGMENTS, &launch.clone().blocks(0), &BODIES);
        assert!(matches!(run, Err(Error::EmptyGrid { .. })), "{run:?}");
        let run = gpu.begin_split(&TWO_SEGMENTS, &launch.clone().threads(1025), &BODIES);
        assert!(matches!(run, Err(Error::InvalidBlockSize { .. })), "{run:?}");
        let unsplit = KernelSpec { split: SplitSpec::NONE, ..TWO_SEGMENTS };
        let run = gpu.begin_split(&unsplit, &launch, &BODIES);
        assert!(
            matches!(&run, Err(Error::CannotSplit { reason, .. }) if reason.contains("no split version")),
            "{run:?}"
        );
        let blocks = gpu.max_coresident_blocks(&unsplit, &launch);
        assert!(matches!(blocks, Err(Error::CannotSplit { .. })), "{blocks:?}");
        assert_eq!(gpu.max_coresident_blocks(&TWO_SEGMENTS, &launch).ok(), Some(4096), "the emulator's grid limit");
        let reads = KernelSpec { split: SplitSpec { reads_device: true, ..TWO_SEGMENTS.split }, ..TWO_SEGMENTS };
        let run = gpu.begin_split(&reads, &launch.clone().graph(true), &BODIES);
        assert!(matches!(run, Err(Error::InvalidBarrier { .. })), "{run:?}");
        let run = gpu.begin_split(&TWO_SEGMENTS, &launch.clone().blocks(16_384).threads(1), &BODIES).unwrap();
        assert_eq!((run.blocks(), run.threads()), (16_384, 1), "no co-residency limit, as on a GPU");
        let run = gpu.begin_split(&TWO_SEGMENTS, &launch.clone().blocks(100_000).threads(1), &BODIES);
        assert!(matches!(run, Err(Error::TooManyBlocks { requested: 100_000, .. })), "{run:?}");
    }

    #[test]
    fn a_profiled_split_run_is_refused_with_the_reason() {
        let gpu = Gpu::emulator();
        let launch = Launch::new().barrier(Barrier::MultiLaunch).blocks(2).threads(32).profile(true);
        let run = gpu.begin_split(&TWO_SEGMENTS, &launch, &BODIES);
        let Err(Error::InvalidBarrier { barrier, reason, .. }) = &run else {
            panic!("expected InvalidBarrier, got {run:?}");
        };
        assert_eq!(barrier, "multi-launch");
        assert!(reason.contains("device barrier"), "{reason}");
        let blocks = gpu.max_coresident_blocks(&TWO_SEGMENTS, &launch);
        assert!(matches!(blocks, Err(Error::InvalidBarrier { .. })), "{blocks:?}");
        let mut buffers = Buffers::new(&gpu, 10);
        assert!(drive(&gpu, &launch.profile(false), &mut buffers).is_ok(), "unprofiled, it runs");
    }

    #[test]
    fn out_of_range_reads_missing_segments_and_wrong_arguments_are_errors() {
        let gpu = Gpu::emulator();
        let launch = Launch::new().barrier(Barrier::MultiLaunch).blocks(2).threads(32);
        let mut a = gpu.zeros::<u32>(3).unwrap();
        let mut run = gpu.begin_split(&TWO_SEGMENTS, &launch, &BODIES).unwrap();
        let read = run.read(&a, 3, "a", 9);
        assert!(matches!(read, Err(Error::OutOfBounds { index: 3, len: 3, line: 9, .. })), "{read:?}");
        let read = run.read(&a, u64::MAX, "a", 9);
        assert!(matches!(read, Err(Error::OutOfBounds { index: u64::MAX, len: 3, .. })), "{read:?}");
        // SAFETY: nothing runs: there is no segment 2.
        let missing = unsafe { run.launch(2, KernelArgs::new()) };
        assert!(matches!(&missing, Err(Error::CannotSplit { reason, .. }) if reason.contains("no segment 2")));
        let mut args = KernelArgs::new();
        args.slice_mut(&mut a);
        // SAFETY: a wrong argument list, which the emulator refuses without running.
        let wrong = unsafe { run.launch(0, args) };
        assert!(matches!(&wrong, Err(Error::CannotSplit { reason, .. }) if reason.contains("argument 1")), "{wrong:?}");
    }
}
