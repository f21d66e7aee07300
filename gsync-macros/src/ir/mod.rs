//! The typed kernel IR: what the checks analyse and every emitter walks.
//!
//! Lowering (`crate::lower`) builds it from the user's function. The
//! expressions and variables of a [`Kernel`] carry their resolved [`Scalar`]
//! types; the IR's types take the type as a parameter `T` so that lowering
//! can build them with inference variables first, which it resolves once
//! inference is done.
//!
//! The IR is the bottom of the crate: it imports no stage, and every stage imports it.

pub mod consts;
mod scalar;

pub use crate::ir_math::MathFn;
pub use consts::{BlockConst, BlockConstKind, ConstTable, ConstValue, UsedBlockConst};
use proc_macro2::Span;
pub use scalar::{half_bits, BinOp, Scalar, UnOp};

/// Index of a scalar variable (parameter or local) in [`Kernel::vars`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct VarId(pub usize);

/// Index of an array (slice parameter, shared array, local array) in [`Kernel::arrays`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ArrayId(pub usize);

/// Index of a loop, used by analyses that track `break`/`continue`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LoopId(pub usize);

/// Index of an inlined call of a device function, in [`Kernel::calls`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CallId(pub usize);

/// A call of a device function, whose body the kernel holds inlined
/// ([`StmtKind::Inline`]).
#[derive(Clone, Debug)]
pub struct InlinedCall {
    /// The function's Rust name.
    pub function: String,
    /// The call in the caller's source.
    pub span: Span,
    /// Whether the body has a `return` before its end ([`StmtKind::Leave`]).
    pub leaves: bool,
    /// The variable that receives the result, for a function that returns one (read by the
    /// random kernels' check that every call runs where Rust runs it).
    #[cfg_attr(not(test), allow(dead_code))]
    pub result: Option<VarId>,
}

/// A name the kernel declares, made unique in it: the Rust name and which
/// declaration of that name it is. Each emitter spells it in its own way.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct UniqueName {
    /// The Rust name (`index` for the counter of a `for _` loop).
    pub base: String,
    /// 1 for the first declaration of `base`; a later one (shadowing, a second
    /// loop over `i`) counts up, skipping numbers whose
    /// [`spelling`](UniqueName::spelling) another name of the kernel took.
    pub ordinal: u32,
}

impl UniqueName {
    /// `base`, or `base_<ordinal>` after the first declaration: no two names
    /// of a kernel share it.
    pub fn spelling(&self) -> String {
        if self.ordinal <= 1 {
            self.base.clone()
        } else {
            format!("{}_{}", self.base, self.ordinal)
        }
    }
}

/// A scalar variable of type `T`.
#[derive(Clone, Debug)]
pub struct Var<T = Scalar> {
    /// The Rust name, as messages quote it (`_` for a `for _` loop's counter).
    pub name: String,
    pub unique: UniqueName,
    pub ty: T,
    pub mutable: bool,
    pub is_param: bool,
    pub span: Span,
}

/// Where an array lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArraySpace {
    /// A slice parameter in global memory; its length is a kernel parameter.
    Global,
    /// A `shared_array::<T, N>()` in the block's shared memory.
    Shared,
    /// A per-thread `[x; N]` array.
    Local,
    /// A `shared_slice::<T>(len)` in the block's dynamic shared memory; its length, set at
    /// launch, is a kernel parameter (see [`SharedSliceDecl`]).
    DynamicShared,
}

impl ArraySpace {
    /// Whether the array is in the block's shared memory, static or dynamic.
    pub fn is_shared(self) -> bool {
        matches!(self, ArraySpace::Shared | ArraySpace::DynamicShared)
    }
}

/// A `let tile = shared_slice::<T>(len);`: the length expression, which the host evaluates
/// at launch (the kernel receives the result as a parameter).
#[derive(Clone, Debug)]
pub struct SharedSliceDecl<T = Scalar> {
    pub array: ArrayId,
    pub len: Expr<T>,
    /// The Rust line of the declaration.
    pub line: u32,
}

/// An array the kernel indexes.
#[derive(Clone, Debug)]
pub struct Array {
    pub name: String,
    pub unique: UniqueName,
    pub elem: Scalar,
    pub space: ArraySpace,
    /// Compile-time length (shared and local arrays), unless it depends on the block size.
    pub len: Option<u64>,
    /// The length of a shared or local array sized by `BLOCK_SIZE`.
    pub block_len: Option<std::rc::Rc<BlockConst>>,
    pub mutable: bool,
    /// A `#[symmetric]` slice parameter: this PE's part of a buffer every PE of a team holds,
    /// which `put` and `get` reach on any PE.
    pub symmetric: bool,
    pub span: Span,
}

/// A kernel parameter in source order.
#[derive(Clone, Debug)]
pub enum Param {
    Slice(ArrayId),
    Scalar(VarId),
}

/// The whole kernel.
#[derive(Clone, Debug)]
pub struct Kernel {
    /// The function's Rust name.
    pub name: String,
    pub params: Vec<Param>,
    pub vars: Vec<Var>,
    pub arrays: Vec<Array>,
    pub body: Block,
    /// Number of `grid_sync()` call sites.
    pub grid_syncs: u32,
    pub loops: usize,
    /// Default block size from `#[grid_phases(threads = N)]`, 0 if unset.
    pub default_threads: u32,
    /// Blocks of the default size kept resident per SM, from
    /// `#[grid_phases(blocks_per_sm = N)]`; 0 if unset.
    pub blocks_per_sm: u32,
    /// The device-function calls inlined in `body`, by [`CallId`].
    pub calls: Vec<InlinedCall>,
    /// The kernel's shared slices, in declaration order.
    pub shared_slices: Vec<SharedSliceDecl>,
    /// The constants sized by `BLOCK_SIZE` it uses, which `check` evaluates at every block size.
    pub block_consts: Vec<UsedBlockConst>,
}

impl Kernel {
    /// A variable by its id.
    pub fn var(&self, id: VarId) -> &Var {
        &self.vars[id.0]
    }
    /// An array by its id.
    pub fn array(&self, id: ArrayId) -> &Array {
        &self.arrays[id.0]
    }
    /// An inlined call by its id.
    pub fn call(&self, id: CallId) -> &InlinedCall {
        &self.calls[id.0]
    }
}

/// A sequence of statements.
pub type Block<T = Scalar> = Vec<Stmt<T>>;

/// A statement with the span of the source it came from.
#[derive(Clone, Debug)]
pub struct Stmt<T = Scalar> {
    pub kind: StmtKind<T>,
    pub span: Span,
}

/// What a statement does.
#[derive(Clone, Debug)]
pub enum StmtKind<T = Scalar> {
    Let {
        var: VarId,
        init: Option<Expr<T>>,
    },
    /// A local array `[init; len]` or `[a, b, c]`.
    LetArray {
        array: ArrayId,
        init: ArrayInit<T>,
    },
    Assign {
        place: Place<T>,
        op: Option<BinOp>,
        value: Expr<T>,
    },
    /// An expression evaluated for its effect (an atomic).
    Expr(Expr<T>),
    If {
        cond: Expr<T>,
        then: Block<T>,
        otherwise: Option<Block<T>>,
    },
    While {
        id: LoopId,
        cond: Expr<T>,
        body: Block<T>,
    },
    Loop {
        id: LoopId,
        body: Block<T>,
    },
    For {
        id: LoopId,
        var: VarId,
        range: ForRange<T>,
        body: Block<T>,
    },
    Break(LoopId),
    Continue(LoopId),
    Return,
    /// The `index`-th grid barrier call site (1-based), at `line`: `grid_sync()`, or
    /// `gpu_sync()` when `scope` is [`SyncScope::Gpu`].
    GridSync {
        index: u32,
        line: u32,
        scope: SyncScope,
    },
    SyncBlock,
    Block(Block<T>),
    /// A device function's body, inlined at a call: its parameters are
    /// `let`s at its start, its result a variable declared before it.
    Inline {
        call: CallId,
        body: Block<T>,
    },
    /// `return` in a device function: leaves the inlined body of `call`.
    Leave(CallId),
    /// `assert!(cond)`, `assert_eq!(a, b)`, …: where the check fails, records the
    /// failure in the status word and stops the thread (see docs/dsl.md).
    Assert {
        check: AssertCheck<T>,
        assertion: Assertion,
    },
    /// `wait_until(|| cond)`: spins until `cond` holds, re-evaluating it; Rust line `line`.
    /// `before` holds the device functions `cond` calls, inlined: they run before each test.
    WaitUntil {
        before: Block<T>,
        cond: Expr<T>,
        line: u32,
    },
    /// `locks.with_lock(index, || { body })`: `body` runs while the calling thread holds
    /// the lock word `locks[index]`, taken with acquire and given back with release.
    Locked {
        array: ArrayId,
        index: Expr<T>,
        body: Block<T>,
        line: u32,
    },
    /// `std::mem::swap(&mut a, &mut b)` of two slice parameters: from here on
    /// each name refers to the other's buffer (and length).
    Swap(ArrayId, ArrayId),
    /// `a.store_chunk(c, v);`: the thread's array `v` into chunk `c` of `a` (see
    /// [`Chunk`]). `stores` says the same element by element (`a[c · N + j] = v[j]`), for
    /// the analyses; CUDA stores the chunk at once, the emulator element by element after
    /// one bounds check of the whole chunk.
    StoreChunk {
        chunk: Chunk,
        from: ArrayId,
        stores: Block<T>,
    },
    /// `a.put_range(pe, at, &source[lo..hi]);` or `a.put_range_signal(…)`: a collective of the
    /// block (see [`RangePut`]).
    PutRange(RangePut<T>),
    /// `a.copy_chunk_async::<N>(c, source, s);`: chunk `s` of the slice `source` into chunk `c`
    /// of the shared array `a` (`chunk`), landing by the thread's next
    /// [`WaitAsyncCopies`](StmtKind::WaitAsyncCopies). `stores` says the same element by element
    /// (`a[c · N + j] = source[s · N + j]`), for the analyses; CUDA issues `cp.async`, the
    /// emulator reads the source at once and writes the chunk at the wait.
    CopyChunkAsync {
        chunk: Chunk,
        source: Chunk,
        stores: Block<T>,
    },
    /// `wait_async_copies()`: the thread's async copies have landed.
    WaitAsyncCopies,
}

/// `a.put_range(pe, at, &source[lo..hi]);`: the block copies this PE's `source[lo..hi]` into
/// `a[at .. at + (hi − lo)]` of PE `pe`, its threads sharing the elements, each written as
/// `put` writes one (a relaxed store at system scope), then meets at a block barrier.
/// `a.put_range_signal(pe, at, &source[lo..hi], flags, index, value);` then has one thread of
/// the block run `flags.signal(pe, index, value)`, which the barrier orders after every element.
/// Rust line `line`.
#[derive(Clone, Debug)]
pub struct RangePut<T = Scalar> {
    /// `a`: a mutable `#[symmetric]` slice parameter.
    pub target: ArrayId,
    /// A slice parameter or a shared array of `a`'s element type.
    pub source: ArrayId,
    /// The PE, `at`, `lo` and `hi`: each a variable that the statements before this one bind,
    /// so that it is evaluated once, in Rust's order, however often the emitters name it.
    pub pe: Expr<T>,
    pub at: Expr<T>,
    pub lo: Expr<T>,
    pub hi: Expr<T>,
    /// `put_range_signal`'s `flags.signal(pe, index, value)`, an [`AtomicOp::Signal`] of
    /// variables bound as the operands are.
    pub signal: Option<Expr<T>>,
    /// The copy as the analyses see it, one element for all: `a.put(pe, at, source[lo])`,
    /// which names both arrays and reads `source` (no emitter writes it).
    pub element: Expr<T>,
    pub line: u32,
}

impl<T> RangePut<T> {
    /// The expressions the statement evaluates: its operands, its element and its signal.
    pub fn exprs(&self) -> Vec<&Expr<T>> {
        let mut exprs = vec![&self.pe, &self.at, &self.lo, &self.hi, &self.element];
        exprs.extend(&self.signal);
        exprs
    }

    /// The call as Rust, its operands named by the variables that hold them:
    /// `halo.put_range(range_pe, range_at, &edge[range_lo..range_hi])`.
    pub fn rust(&self, k: &Kernel) -> String {
        let name = |e: &Expr<T>| match e.kind {
            ExprKind::Var(v) => k.var(v).name.clone(),
            _ => "…".to_owned(),
        };
        let (target, source) = (&k.array(self.target).name, &k.array(self.source).name);
        let range =
            format!("{}, {}, &{source}[{}..{}]", name(&self.pe), name(&self.at), name(&self.lo), name(&self.hi));
        match &self.signal {
            Some(Expr { kind: ExprKind::Atomic { array, index, args, .. }, .. }) => {
                let flags = &k.array(*array).name;
                let value = args.last().map_or_else(|| "…".to_owned(), name);
                format!("{target}.put_range_signal({range}, {flags}, {}, {value})", name(index))
            }
            _ => format!("{target}.put_range({range})"),
        }
    }

    /// The operands that every thread of the block must agree on.
    pub fn operands(&self) -> Vec<&Expr<T>> {
        let mut operands = vec![&self.pe, &self.at, &self.lo, &self.hi];
        if let Some(Expr { kind: ExprKind::Atomic { index, args, .. }, .. }) = &self.signal {
            operands.push(index);
            operands.extend(args);
        }
        operands
    }
}

/// Chunk `index` of `array`: its `len` elements from `index · len` (`len` a power of two),
/// which a GPU moves in accesses of up to 16 bytes. Rust line `line`.
#[derive(Clone, Copy, Debug)]
pub struct Chunk {
    pub array: ArrayId,
    /// A variable holding the chunk's index (evaluated once, before the access).
    pub index: VarId,
    pub len: u64,
    pub line: u32,
}

/// What an assertion checks.
#[derive(Clone, Debug)]
pub enum AssertCheck<T = Scalar> {
    /// `assert!(cond)`: fails where `cond` is false.
    Holds(Expr<T>),
    /// `assert_eq!(left, right)` (`op` is `Eq`) or `assert_ne!` (`Ne`): fails where
    /// `left op right` is false, and reports both values.
    Compare { op: BinOp, left: Expr<T>, right: Expr<T> },
}

impl<T> AssertCheck<T> {
    /// The expressions the check evaluates, in order.
    pub fn exprs(&self) -> Vec<&Expr<T>> {
        match self {
            AssertCheck::Holds(cond) => vec![cond],
            AssertCheck::Compare { left, right, .. } => vec![left, right],
        }
    }
}

/// What the runtime says about one `assert!` of a kernel when it fails.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assertion {
    /// The kernel's assertions are numbered 0, 1, … in source order; the status word
    /// carries the number, which indexes `KernelSpec::assertions`.
    pub number: u32,
    /// Rust source line.
    pub line: u32,
    /// The user's message, or rustc's (`assertion failed: a[i] > 0`).
    pub message: String,
    /// `debug_assert!` and friends: checked only in the body with bounds checks.
    pub debug_only: bool,
}

/// A local array's initializer.
#[derive(Clone, Debug)]
pub enum ArrayInit<T = Scalar> {
    Repeat(Expr<T>),
    List(Vec<Expr<T>>),
    /// `a.load_chunk::<N>(c)`: chunk `c` of `a` (see [`Chunk`]). `loads` says the same
    /// element by element (`a[c · N + j]`), for the analyses; CUDA loads the chunk at once.
    Chunk {
        chunk: Chunk,
        loads: Vec<Expr<T>>,
    },
}

/// What a `for` loop iterates over.
#[derive(Clone, Debug)]
pub enum ForRange<T = Scalar> {
    /// `a..b`, `a..=b`, `(a..b).step_by(s)`, `(a..b).rev()`.
    Seq { start: Expr<T>, end: Expr<T>, inclusive: bool, step: Option<Expr<T>>, reverse: bool },
    /// `grid_stride(a..b)`: every thread of the grid takes every grid_size()-th index.
    GridStride { start: Expr<T>, end: Expr<T> },
    /// `block_stride(a..b)`: every thread of a block takes every block_dim()-th index.
    BlockStride { start: Expr<T>, end: Expr<T> },
}

/// An assignable place.
#[derive(Clone, Debug)]
pub enum Place<T = Scalar> {
    Var(VarId),
    Elem { array: ArrayId, index: Box<Expr<T>>, line: u32 },
}

/// An expression of type `ty`.
#[derive(Clone, Debug)]
pub struct Expr<T = Scalar> {
    pub kind: ExprKind<T>,
    pub ty: T,
    pub span: Span,
}

/// What an expression computes.
#[derive(Clone, Debug)]
pub enum ExprKind<T = Scalar> {
    Int(i128),
    Float(f64),
    Bool(bool),
    Var(VarId),
    Unary(UnOp, Box<Expr<T>>),
    Binary(BinOp, Box<Expr<T>>, Box<Expr<T>>),
    /// `e as T`, T being the expression's own type.
    Cast(Box<Expr<T>>),
    Load {
        array: ArrayId,
        index: Box<Expr<T>>,
        line: u32,
    },
    Len(ArrayId),
    Builtin(Builtin),
    /// A method or function from the math table, e.g. `x.min(y)` (receiver
    /// first in `args`).
    Call {
        func: MathFn,
        args: Vec<Expr<T>>,
    },
    Atomic {
        op: AtomicOp,
        array: ArrayId,
        index: Box<Expr<T>>,
        args: Vec<Expr<T>>,
        line: u32,
        /// The memory ordering: `Relaxed` unless the call names one.
        order: MemoryOrder,
    },
    Shuffle {
        op: ShuffleOp,
        value: Box<Expr<T>>,
        lane: Box<Expr<T>>,
    },
    /// `if c { a } else { b }` with pure branches.
    Select {
        cond: Box<Expr<T>>,
        then: Box<Expr<T>>,
        otherwise: Box<Expr<T>>,
    },
    /// A warp vote (`ballot`, `any`, `all`, `match_any`) of `value` over the warp's lanes.
    Vote {
        op: VoteOp,
        value: Box<Expr<T>>,
    },
}

/// Thread-identity and launch-shape builtins.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Builtin {
    ThreadIdx,
    BlockIdx,
    BlockDim,
    GridDim,
    GlobalId,
    GridSize,
    LaneId,
    WarpSize,
    /// `warp_id()`: `thread_idx() / 32`, the same in every lane of a warp.
    WarpId,
    /// `thread_idx_x()` … `thread_idx_z()`: the thread's index along an axis of its block.
    ThreadIdxAxis(Axis),
    /// `block_idx_x()` … `block_idx_z()`: the block's index along an axis of the grid.
    BlockIdxAxis(Axis),
    /// `block_dim_x()` … `block_dim_z()`: the block's extent along an axis.
    BlockDimAxis(Axis),
    /// `grid_dim_x()` … `grid_dim_z()`: the grid's extent along an axis.
    GridDimAxis(Axis),
    /// `BLOCK_SIZE`: threads per block as a `usize` constant of each compiled block size.
    BlockSize,
    /// `pe()`: the PE (GPU) of a team the block runs on; 0 outside a team. The same in every
    /// block of a PE, different between PEs.
    Pe,
    /// `n_pes()`: the number of PEs of the team; 1 outside a team.
    NPes,
}

/// An atomic read-modify-write of an array element (`a.atomic_add(i, v)`, …),
/// which returns the element's old value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomicOp {
    Add,
    Min,
    Max,
    Exch,
    Cas,
    /// `a.load_acquire(i)`: an atomic load (no argument).
    Load,
    /// `a.store_release(i, v)`: an atomic store, a statement whose value is unused.
    Store,
    /// `a.get(pe, i)` on a `#[symmetric]` slice: a relaxed atomic load of element `i` of PE
    /// `pe`'s part (the PE is the first argument).
    Get,
    /// `a.put(pe, i, v)` on a `#[symmetric]` slice: a relaxed atomic store to element `i` of PE
    /// `pe`'s part, a statement (the PE, then the value, are the arguments).
    Put,
    /// `a.signal(pe, i, v)` on a `#[symmetric]` slice: a release store, at system scope, to
    /// element `i` of PE `pe`'s part, a statement (the PE, then the value, are the arguments).
    Signal,
    /// `a.load_signal(i)` on a `#[symmetric]` slice: an acquire load, at system scope, of this
    /// PE's element `i`, which other PEs `signal`.
    LoadSignal,
}

/// The memory ordering of an atomic, named as `core::sync::atomic::Ordering` names it; at
/// device (GPU) scope.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemoryOrder {
    Relaxed,
    Acquire,
    Release,
    AcqRel,
    SeqCst,
}

impl MemoryOrder {
    /// The `Ordering` variant's name.
    pub fn name(self) -> &'static str {
        match self {
            MemoryOrder::Relaxed => "Relaxed",
            MemoryOrder::Acquire => "Acquire",
            MemoryOrder::Release => "Release",
            MemoryOrder::AcqRel => "AcqRel",
            MemoryOrder::SeqCst => "SeqCst",
        }
    }

    /// Looks a variant up by its name.
    pub fn from_name(name: &str) -> Option<MemoryOrder> {
        [MemoryOrder::Relaxed, MemoryOrder::Acquire, MemoryOrder::Release, MemoryOrder::AcqRel, MemoryOrder::SeqCst]
            .into_iter()
            .find(|o| o.name() == name)
    }
}

/// A warp shuffle (`shfl_up`, `shfl_down`, `shfl_xor`, `shfl`): whose value each lane reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShuffleOp {
    Up,
    Down,
    Xor,
    Idx,
}

/// A warp vote: what every lane of the warp learns about a value of each lane.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VoteOp {
    /// `ballot(p)`: a `u32` with bit `l` set where lane `l`'s `p` is true.
    Ballot,
    /// `any(p)`: whether `p` is true in some lane.
    Any,
    /// `all(p)`: whether `p` is true in every lane.
    All,
    /// `match_any(v)`: a `u32` with bit `l` set where lane `l`'s `v` has the calling lane's bits.
    MatchAny,
}

impl VoteOp {
    /// The Rust name of the vote's function.
    pub fn name(self) -> &'static str {
        match self {
            VoteOp::Ballot => "ballot",
            VoteOp::Any => "any",
            VoteOp::All => "all",
            VoteOp::MatchAny => "match_any",
        }
    }

    /// Whether every lane that takes part gets the same result.
    pub fn same_in_every_lane(self) -> bool {
        !matches!(self, VoteOp::MatchAny)
    }
}

/// Which blocks a grid barrier waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncScope {
    /// `grid_sync()`: every block of the launch, on every PE of a team.
    Team,
    /// `gpu_sync()`: the blocks on this PE's GPU (every block outside a team).
    Gpu,
}

impl SyncScope {
    /// The call, as the source writes it.
    pub fn call(self) -> &'static str {
        match self {
            SyncScope::Team => "grid_sync()",
            SyncScope::Gpu => "gpu_sync()",
        }
    }
}

/// The operations that a group of threads must execute together: the one
/// place that says which operations they are. The uniformity check says how
/// much divergence each tolerates, the emitters keep each out of code that
/// only some threads run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Collective {
    GridSync,
    /// `gpu_sync()`: a grid barrier over one PE's blocks.
    GpuSync,
    SyncBlock,
    Shuffle,
    /// A warp vote (`ballot`, `any`, `all`, `match_any`).
    Vote,
    /// Two slice parameters trading places: every thread must see the same
    /// buffer behind a name.
    Swap,
    /// `put_range` (`signal`: `put_range_signal`): the block's threads share one copy and
    /// meet at a block barrier at its end.
    RangePut {
        signal: bool,
    },
}

impl Collective {
    /// How error messages name the collective.
    pub fn name(self) -> &'static str {
        match self {
            Collective::GridSync => "`grid_sync()`",
            Collective::GpuSync => "`gpu_sync()`",
            Collective::SyncBlock => "`sync_block()`",
            Collective::Shuffle => "a warp shuffle",
            Collective::Vote => "a warp vote",
            Collective::Swap => "a swap of slices",
            Collective::RangePut { signal: false } => "`put_range`",
            Collective::RangePut { signal: true } => "`put_range_signal`",
        }
    }

    /// The collective a statement is, if any.
    pub fn of_stmt<T>(s: &StmtKind<T>) -> Option<Collective> {
        match s {
            StmtKind::GridSync { scope: SyncScope::Team, .. } => Some(Collective::GridSync),
            StmtKind::GridSync { scope: SyncScope::Gpu, .. } => Some(Collective::GpuSync),
            StmtKind::SyncBlock => Some(Collective::SyncBlock),
            StmtKind::Swap(..) => Some(Collective::Swap),
            StmtKind::PutRange(put) => Some(Collective::RangePut { signal: put.signal.is_some() }),
            _ => None,
        }
    }

    /// The collective an expression is (not its operands), if any.
    pub fn of_expr<T>(e: &ExprKind<T>) -> Option<Collective> {
        match e {
            ExprKind::Shuffle { .. } => Some(Collective::Shuffle),
            ExprKind::Vote { .. } => Some(Collective::Vote),
            _ => None,
        }
    }
}

/// An axis of a 2-D or 3-D block or grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Axis {
    X,
    Y,
    Z,
}

impl Axis {
    /// Every axis, x first.
    pub const ALL: [Axis; 3] = [Axis::X, Axis::Y, Axis::Z];

    /// `x`, `y` or `z`: the component's name in CUDA and the builtins' suffix.
    pub fn name(self) -> &'static str {
        match self {
            Axis::X => "x",
            Axis::Y => "y",
            Axis::Z => "z",
        }
    }

    /// 0, 1 or 2: the component's position in a tuple.
    pub fn position(self) -> usize {
        self as usize
    }
}
