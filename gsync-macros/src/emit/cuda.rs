//! The CUDA C emitter: one `extern "C" __global__` function per kernel,
//! indented, with Rust names, using the prelude's helpers wherever C++ would
//! give an operation a meaning other than Rust's.

use crate::emit::assertions::{has_assertions, AssertStops};
mod communication;
mod dims;
mod range_put;
mod shared_slices;

use crate::check::Facts;
use crate::emit::block_size::BlockConstCode;
use crate::emit::{cuda_names, cuda_ops};
use crate::ir::*;
use crate::ir_walk::contains_grid_sync;
use crate::names;
use crate::split::SplitPlan;
use gsync_contract::{LAUNCH_BOUNDS_MACRO, PROFILE_PARAMETERS_MACRO};
use std::fmt::Write;

/// Constant `for` ranges up to this many iterations are marked `#pragma unroll`.
const MAX_UNROLLED_TRIPS: i128 = 32;

/// The fused kernel's definition, with or without bounds checks. Its profile hooks
/// (`GSYNC_PROFILE_*`, from the runtime's `profile.cuh` or `no_profile.cuh`) record a
/// per-phase profile when the runtime compiles it for one, and are empty otherwise.
pub fn kernel_source(k: &Kernel, facts: &Facts, bounds_checks: bool) -> String {
    let mut e = CudaEmitter::new(k, facts, bounds_checks, true);
    let checks = if bounds_checks { " with bounds checks" } else { "" };
    let shared: Vec<ArrayId> = shared_arrays(k).collect();
    e.function(&Function {
        name: &cuda_names::kernel_symbol(k),
        comment: &format!("Rust `fn {}`, compiled by #[grid_phases]{checks}.", k.name),
        extra: &[],
        shared: &shared,
        body: &k.body,
        barrier: k.grid_syncs > 0,
        after_failed_assert: false,
    });
    e.out
}

/// The kernel split at its barriers: one function per segment.
pub fn split_source(k: &Kernel, facts: &Facts, plan: &SplitPlan, bounds_checks: bool) -> String {
    let mut e = CudaEmitter::new(k, facts, bounds_checks, false);
    let checks = if bounds_checks { " with bounds checks" } else { "" };
    let asserting = has_assertions(&k.body, bounds_checks);
    for (i, segment) in plan.segments.iter().enumerate() {
        let name = cuda_names::segment_symbol(k, i);
        if i > 0 {
            e.out.push('\n');
        }
        // A segment holds no grid_sync(): a failed assertion ends its thread, and the next
        // launch's threads end at its start.
        e.asserts = AssertStops::of(&segment.body, bounds_checks);
        let lines = match (segment.first_line, segment.last_line) {
            _ if segment.body.is_empty() => "no statements".to_owned(),
            (a, b) if a == b => format!("line {a}"),
            (a, b) => format!("lines {a}-{b}"),
        };
        e.function(&Function {
            name: &name,
            comment: &format!("Segment {i} of Rust `fn {}` ({lines}), one launch between barriers{checks}.", k.name),
            extra: &segment.host_values,
            shared: &segment.shared,
            body: &segment.body,
            barrier: false,
            after_failed_assert: asserting && i > 0,
        });
    }
    e.out
}

/// The contract's first line for a body that uses `f16` or `bf16`, which the runtime compiles
/// with the half precision prelude (`core/half.cuh`).
fn half_marker(facts: &Facts) -> String {
    if facts.half {
        gsync_contract::HALF_MARKER.to_owned()
    } else {
        String::new()
    }
}

/// The length of a shared or local array: a number, or a constant expression in
/// `GSYNC_BLOCK_SIZE`.
fn array_len(a: &Array) -> String {
    match (&a.len, &a.block_len) {
        (_, Some(tree)) => tree.cuda(),
        (len, None) => len.unwrap_or(1).to_string(),
    }
}

/// Whether `body` has a `while` or `loop` that no `grid_sync()` follows, which checks the
/// launch's deadline.
fn has_ending_loops(body: &Block, asserts: &AssertStops) -> bool {
    let mut found = false;
    crate::ir_walk::each_stmt(body, &mut |s| {
        found |=
            matches!(s.kind, StmtKind::While { id, .. } | StmtKind::Loop { id, .. } if asserts.loop_ends_thread(id))
    });
    found
}

/// The shared arrays and shared slices a kernel declares.
fn shared_arrays(k: &Kernel) -> impl Iterator<Item = ArrayId> + '_ {
    k.arrays.iter().enumerate().filter(|(_, a)| a.space.is_shared()).map(|(i, _)| ArrayId(i))
}

/// What one emitted `__global__` function consists of.
struct Function<'a> {
    name: &'a str,
    comment: &'a str,
    extra: &'a [VarId],
    shared: &'a [ArrayId],
    body: &'a Block,
    barrier: bool,
    /// Whether the function starts by ending every thread when an earlier launch's
    /// assertion failed: a segment after the first of a kernel with `assert!`s.
    after_failed_assert: bool,
}

struct CudaEmitter<'k> {
    k: &'k Kernel,
    facts: &'k Facts,
    checked: bool,
    /// Whether the profile hooks are emitted: in the fused kernel, not in the segments.
    profiled: bool,
    out: String,
    indent: usize,
    /// How the body's failed assertions stop (in a segment of the split kernel, which holds
    /// no `grid_sync()`, every one ends its thread).
    asserts: AssertStops,
    /// Whether the kernel reads per-axis builtins, so that its linear builtins are the
    /// prelude's linear indices rather than the `.x` components.
    multi_dim: bool,
    /// Whether the function being emitted counts its `grid_sync()` calls in `gsync_phase`:
    /// one with a grid barrier.
    counts_phases: bool,
}

impl<'k> CudaEmitter<'k> {
    /// An emitter of `k`'s body with or without bounds checks, with the profile hooks or not.
    fn new(k: &'k Kernel, facts: &'k Facts, checked: bool, profiled: bool) -> Self {
        CudaEmitter {
            k,
            facts,
            checked,
            profiled,
            out: half_marker(facts),
            indent: 1,
            asserts: AssertStops::of(&k.body, checked),
            multi_dim: facts.axes.any(),
            counts_phases: false,
        }
    }
}

/// C++ operator precedence, higher binds tighter.
mod prec {
    pub const TERNARY: u8 = 3;
    pub const LOGICAL_OR: u8 = 4;
    pub const LOGICAL_AND: u8 = 5;
    pub const UNARY: u8 = 15;
    pub const PRIMARY: u8 = 16;
}

/// An emitted expression and its precedence.
struct Code {
    text: String,
    prec: u8,
}

impl Code {
    fn primary(text: String) -> Code {
        Code { text, prec: prec::PRIMARY }
    }
    /// The text, parenthesized if it binds looser than `min`.
    fn at(self, min: u8) -> String {
        if self.prec < min {
            format!("({})", self.text)
        } else {
            self.text
        }
    }
}

fn binop_prec(op: BinOp) -> u8 {
    match op {
        BinOp::Mul | BinOp::Div | BinOp::Rem => 13,
        BinOp::Add | BinOp::Sub => 12,
        BinOp::Shl | BinOp::Shr => 11,
        BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => 10,
        BinOp::Eq | BinOp::Ne => 9,
        BinOp::BitAnd => 8,
        BinOp::BitXor => 7,
        BinOp::BitOr => 6,
        BinOp::And => prec::LOGICAL_AND,
        BinOp::Or => prec::LOGICAL_OR,
    }
}

/// Types whose C++ arithmetic already wraps like Rust's (no promotion, unsigned).
fn wraps_natively(s: Scalar) -> bool {
    matches!(s, Scalar::U32 | Scalar::U64 | Scalar::Usize)
}

/// Types whose C++ bitwise operators keep the type (no promotion).
fn bitwise_natively(s: Scalar) -> bool {
    matches!(s, Scalar::U32 | Scalar::U64 | Scalar::Usize | Scalar::I32 | Scalar::I64 | Scalar::Bool)
}

impl CudaEmitter<'_> {
    fn line(&mut self, text: &str) {
        for _ in 0..self.indent {
            self.out.push_str("    ");
        }
        self.out.push_str(text);
        self.out.push('\n');
    }

    /// One `extern "C" __global__` function: the kernel's parameters, then
    /// `extra` scalars passed by value, then the barrier state and status, then
    /// in the fused kernel the profile's parameters (none unless profiled).
    fn function(&mut self, f: &Function<'_>) {
        let k = self.k;
        let _ = writeln!(self.out, "// {}", f.comment);
        let _ = writeln!(self.out, "extern \"C\" __global__ void __launch_bounds__({LAUNCH_BOUNDS_MACRO}) {}(", f.name);
        let mut params = Vec::new();
        let swapped = &self.facts.swapped;
        for p in &k.params {
            match p {
                Param::Slice(id) => {
                    let (a, name) = (k.array(*id), cuda_names::array(k, *id));
                    let constness = if a.mutable { "" } else { "const " };
                    let len = names::generated(&name, "len");
                    params.push(if swapped.contains(id) {
                        // `swap` assigns it: C's `restrict` would make reading an object through
                        // one pointer after writing it through another undefined.
                        format!("{constness}{}* {name}, usize {len}", a.elem.name())
                    } else {
                        format!("{constness}{}* __restrict__ {name}, const usize {len}", a.elem.name())
                    });
                }
                Param::Scalar(id) => {
                    let v = k.var(*id);
                    let constness = if v.mutable { "" } else { "const " };
                    params.push(format!("{constness}{} {}", v.ty.name(), cuda_names::var(k, *id)));
                }
            }
        }
        for id in f.extra {
            let v = k.var(*id);
            params.push(format!("const {} {}", v.ty.name(), cuda_names::var(k, *id)));
        }
        params.extend(shared_slices::params(k));
        params.extend(gsync_contract::TRAILING_PARAMS.iter().map(ToString::to_string));
        let last = params.len() - 1;
        for (i, p) in params.iter().enumerate() {
            let end = match (i == last, self.profiled) {
                (false, _) => ",",
                (true, true) => "",
                (true, false) => ")",
            };
            let _ = writeln!(self.out, "    {p}{end}");
        }
        if self.profiled {
            let _ = writeln!(self.out, "    {PROFILE_PARAMETERS_MACRO})");
        }
        self.out.push_str("{\n");
        for id in f.shared.iter().filter(|id| k.array(**id).space == ArraySpace::Shared) {
            let a = k.array(*id);
            // 16 bytes, so that chunks (`load_chunk`, `store_chunk`) of the array are aligned.
            let text =
                format!("__shared__ __align__(16) {} {}[{}];", a.elem.name(), cuda_names::array(k, *id), array_len(a));
            self.line(&text);
        }
        for line in shared_slices::declarations(k, f.shared) {
            self.line(&line);
        }
        if self.profiled {
            self.line("GSYNC_PROFILE_BEGIN();");
        }
        self.line(&format!("{}  // the next launch's barrier words", gsync_contract::PREPARE_NEXT_LAUNCH));
        if f.barrier {
            self.line("gsync_barrier_t gsync_barrier = gsync_barrier_begin(gsync_barrier_state);");
        }
        self.counts_phases = f.barrier;
        if f.barrier {
            self.line("u32 gsync_phase = 0u;  // grid_sync() calls passed, for a failed assert! and the deadline");
        }
        if f.barrier || has_ending_loops(f.body, &self.asserts) {
            self.line("gsync::deadline_start(gsync_barrier_state);");
        }
        if f.after_failed_assert {
            self.line("if (gsync::assert_failed(gsync_status)) return;  // an assert! of an earlier launch failed");
        }
        self.ordering_escape(f.body);
        self.block_body(f.body);
        if self.profiled {
            self.line(self.profile_end());
        }
        self.out.push_str("}\n");
    }

    /// The profile hook at a thread's end. A kernel with `grid_sync()` has no `return`, so
    /// the whole block reaches its end together; in any other, each thread records its own.
    fn profile_end(&self) -> &'static str {
        if self.k.grid_syncs > 0 {
            "GSYNC_PROFILE_END();"
        } else {
            "GSYNC_PROFILE_EXIT();"
        }
    }

    fn block_body(&mut self, block: &Block) {
        for s in block {
            self.stmt(s);
        }
    }

    fn open(&mut self, header: &str) {
        self.line(&if header.is_empty() { "{".to_string() } else { format!("{header} {{") });
        self.indent += 1;
    }

    fn close(&mut self) {
        self.indent -= 1;
        self.line("}");
    }

    fn nested(&mut self, header: &str, block: &Block) {
        self.open(header);
        self.block_body(block);
        self.close();
    }

    /// A `while` or `loop`. Rust defines a loop that never ends; C++ lets the compiler assume
    /// that a loop without side effects ends, and delete it. Each iteration therefore starts
    /// with `gsync_loop_progress()`, a side effect that emits no instruction, or, in a loop
    /// that no `grid_sync()` follows, with the deadline's check, which contains it: past the
    /// launch's deadline the thread ends there.
    /// Marks the loop that follows `#pragma unroll 1` where `body` crosses a `grid_sync()`: a
    /// loop over phases stays a loop, since unrolled the fused kernel would hold a copy of every
    /// phase per trip and run each copy from a cold instruction cache.
    fn keep_rolled_over_phases(&mut self, body: &Block) {
        if contains_grid_sync(body) {
            self.line("#pragma unroll 1");
        }
    }

    fn unbounded_loop(&mut self, id: LoopId, header: &str, body: &Block, span: proc_macro2::Span) {
        let ends_thread = self.asserts.loop_ends_thread(id);
        let polls = format!("gsync_loop{}_polls", id.0);
        if ends_thread {
            self.line(&format!("u32 {polls} = 0u;  // iterations, for the launch's deadline"));
        }
        self.keep_rolled_over_phases(body);
        self.open(header);
        if ends_thread {
            let line = crate::diagnostics::line_of(span);
            let phase = self.phase_count();
            self.open(&format!(
                "if (gsync::deadline_poll(++{polls}, gsync_status, gsync_barrier_state, {phase}, {line}u))"
            ));
            if self.profiled {
                self.line("GSYNC_PROFILE_EXIT();");
            }
            self.line("return;");
            self.close();
        } else {
            self.line("gsync_loop_progress();");
        }
        self.block_body(body);
        self.close();
    }

    fn stmt(&mut self, s: &Stmt) {
        crate::stack::deep(|| self.stmt_inner(s))
    }

    fn stmt_inner(&mut self, s: &Stmt) {
        match &s.kind {
            StmtKind::Let { var, init } => {
                let v = self.k.var(*var);
                let (ty, name) = (v.ty.name(), cuda_names::var(self.k, *var));
                match init {
                    Some(e) => {
                        let constness = if v.mutable { "" } else { "const " };
                        let value = self.expr(e).text;
                        self.line(&format!("{constness}{ty} {name} = {value};"));
                    }
                    None => self.line(&format!("{ty} {name};")),
                }
            }
            StmtKind::LetArray { array, init } => self.let_array(*array, init),
            StmtKind::StoreChunk { chunk, from, .. } => self.store_chunk(chunk, *from),
            StmtKind::CopyChunkAsync { chunk, source, .. } => self.copy_chunk_async(chunk, source),
            StmtKind::WaitAsyncCopies => self.line("gsync::wait_async_copies();"),
            StmtKind::PutRange(put) => self.put_range(put),
            StmtKind::Assign { place, op, value } => self.assign(place, *op, value),
            StmtKind::Expr(e) => self.effect(e),
            StmtKind::If { cond, then, otherwise } => {
                let c = self.expr(cond).text;
                self.open(&format!("if ({c})"));
                self.block_body(then);
                self.else_chain(otherwise.as_ref());
            }
            StmtKind::While { id, cond, body } => {
                let c = self.expr(cond).text;
                self.unbounded_loop(*id, &format!("while ({c})"), body, s.span);
            }
            StmtKind::Loop { id, body } => self.unbounded_loop(*id, "while (true)", body, s.span),
            StmtKind::For { var, range, body, .. } => self.for_loop(*var, range, body),
            StmtKind::Break(_) => self.line("break;"),
            StmtKind::Continue(_) => self.line("continue;"),
            StmtKind::Return => {
                if self.profiled {
                    self.line(self.profile_end());
                }
                self.line("return;");
            }
            StmtKind::GridSync { index, line, scope } => {
                let (blocks, call) = match scope {
                    SyncScope::Team => ("every block's", "gsync_grid_sync(gsync_barrier, gsync_status);"),
                    SyncScope::Gpu => ("this GPU's blocks'", "gsync_gpu_sync(gsync_barrier, gsync_status);"),
                };
                self.line(&format!(
                    "// {} #{index}, line {line}: {blocks} writes above are visible below",
                    scope.call()
                ));
                if self.profiled {
                    self.line("GSYNC_PROFILE_ARRIVE();");
                }
                self.around_barrier(call);
                if self.profiled {
                    self.line("GSYNC_PROFILE_LEAVE();");
                }
                // Every thread sees the failures and the passed deadline recorded before the
                // barrier: they stop together. The deadline is checked at every 64th barrier.
                self.line("gsync_phase += 1u;");
                let deadline =
                    format!("gsync::stop_at_barrier(gsync_status, gsync_barrier_state, gsync_phase, {line}u)");
                let stop = if self.asserts.stop_at_grid_sync() {
                    format!("gsync::stopped_before(gsync_status, gsync_phase) || {deadline}")
                } else {
                    deadline
                };
                self.open(&format!("if ({stop})"));
                if self.profiled {
                    self.line(self.profile_end());
                }
                self.line("return;");
                self.close();
            }
            StmtKind::Assert { check, assertion } => self.assertion(check, assertion),
            StmtKind::SyncBlock => self.around_barrier("gsync_sync_block();"),
            StmtKind::Block(b) => self.nested("", b),
            StmtKind::Inline { call, body } => {
                let info = self.k.call(*call);
                self.line(&format!(
                    "// {}(…), line {}, inlined",
                    info.function,
                    crate::diagnostics::line_of(info.span)
                ));
                self.nested("", body);
                if info.leaves {
                    // A label after the block: `return` jumps out of the function's scope, past nothing.
                    self.line(&format!("{}: ;", cuda_names::leave_label(self.k, *call)));
                }
            }
            StmtKind::Leave(call) => self.line(&format!("goto {};", cuda_names::leave_label(self.k, *call))),
            StmtKind::WaitUntil { before, cond, line } => self.wait_until(before, cond, *line),
            StmtKind::Locked { array, index, body, line } => self.locked(*array, index, body, *line),
            StmtKind::Swap(a, b) => {
                let (x, y) = (cuda_names::array(self.k, *a), cuda_names::array(self.k, *b));
                let (x_len, y_len) = (names::generated(&x, "len"), names::generated(&y, "len"));
                self.line(&format!(
                    "gsync::swap({x}, {y}); gsync::swap({x_len}, {y_len});  // std::mem::swap(&mut {}, &mut {})",
                    self.k.array(*a).name,
                    self.k.array(*b).name
                ));
            }
        }
    }

    /// A barrier, fenced for the compiler. `__restrict__` lets it assume that
    /// nothing but this thread changes what a mutable slice points to, so it
    /// could keep a value in a register across the barrier or sink a store
    /// past it. Handing the slices to an empty `asm` that clobbers memory,
    /// before and after, tells it the barrier may read and write them.
    fn around_barrier(&mut self, barrier: &str) {
        let slices: Vec<String> = (0..self.k.arrays.len())
            .map(ArrayId)
            .filter(|a| self.k.array(*a).space == ArraySpace::Global && self.k.array(*a).mutable)
            .map(|a| format!("\"l\"({})", cuda_names::array(self.k, a)))
            .collect();
        if slices.is_empty() {
            self.line(barrier);
            return;
        }
        let fence = format!("asm volatile(\"\" : : {} : \"memory\");", slices.join(", "));
        self.line(&fence);
        self.line(barrier);
        self.line(&fence);
    }

    /// An `assert!`: where the check fails, the failure is recorded, and the thread ends
    /// unless a `grid_sync()` can follow (see `emit::assertions`).
    fn assertion(&mut self, check: &AssertCheck, a: &Assertion) {
        if a.debug_only && !self.checked {
            return;
        }
        let (n, line) = (a.number, a.line);
        let ends = self.asserts.ends_thread(n);
        let debug = if a.debug_only { "debug_" } else { "" };
        let name = match check {
            AssertCheck::Holds(_) => "assert",
            AssertCheck::Compare { op: BinOp::Eq, .. } => "assert_eq",
            AssertCheck::Compare { .. } => "assert_ne",
        };
        let stop = if ends { "ends the thread" } else { "stops the grid at the next grid_sync()" };
        self.line(&format!("// {debug}{name}! #{n}, line {line}: a failure {stop}"));
        let scoped = match check {
            AssertCheck::Holds(cond) => {
                let c = self.expr(cond).at(prec::UNARY);
                self.open(&format!("if (!{c})"));
                self.line(&format!("gsync::fail_assert(gsync_status, {}, {n}u, {line}u);", self.phase()));
                false
            }
            AssertCheck::Compare { op, left, right } => {
                let stem = format!("assert{n}_");
                let (l, r) = (names::generated(&stem, "left"), names::generated(&stem, "right"));
                let t = left.ty.name();
                self.open("");
                let (lv, rv) = (self.expr(left).text, self.expr(right).text);
                self.line(&format!("const {t} {l} = {lv};"));
                self.line(&format!("const {t} {r} = {rv};"));
                self.open(&format!("if (!({l} {} {r}))", op.symbol()));
                self.line(&format!("gsync::fail_assert(gsync_status, {}, {n}u, {line}u, {l}, {r});", self.phase()));
                true
            }
        };
        if ends {
            if self.profiled {
                self.line("GSYNC_PROFILE_EXIT();");
            }
            self.line("return;");
        }
        self.close();
        if scoped {
            self.close();
        }
    }

    /// The `grid_sync()` calls the thread has passed, as a failed assertion records them:
    /// counted only where the grid stops after a failure.
    fn phase(&self) -> &'static str {
        if self.asserts.stop_at_grid_sync() {
            "gsync_phase"
        } else {
            "0u"
        }
    }

    /// The `grid_sync()` calls the thread has passed, as the deadline records them.
    pub(super) fn phase_count(&self) -> &'static str {
        if self.counts_phases {
            "gsync_phase"
        } else {
            "0u"
        }
    }

    /// Closes an `if`, continuing with `else if`/`else` branches.
    fn else_chain(&mut self, otherwise: Option<&Block>) {
        crate::stack::deep(|| self.else_chain_inner(otherwise))
    }

    fn else_chain_inner(&mut self, otherwise: Option<&Block>) {
        let Some(block) = otherwise else {
            self.close();
            return;
        };
        self.indent -= 1;
        match block.as_slice() {
            [Stmt { kind: StmtKind::If { cond, then, otherwise }, .. }] => {
                let c = self.expr(cond).text;
                self.line(&format!("}} else if ({c}) {{"));
                self.indent += 1;
                self.block_body(then);
                self.else_chain(otherwise.as_ref());
            }
            _ => {
                self.line("} else {");
                self.indent += 1;
                self.block_body(block);
                self.close();
            }
        }
    }

    fn let_array(&mut self, array: ArrayId, init: &ArrayInit) {
        let a = self.k.array(array);
        let (ty, name, len) = (a.elem.name(), cuda_names::array(self.k, array), array_len(a));
        match init {
            ArrayInit::List(values) => {
                let items: Vec<String> = values.iter().map(|v| self.expr(v).text).collect();
                self.line(&format!("{ty} {name}[{len}] = {{ {} }};", items.join(", ")));
            }
            ArrayInit::Repeat(value) => {
                let mut v = self.expr(value).text;
                let i = names::generated(&name, "fill");
                self.line(&format!("{ty} {name}[{len}];"));
                // Rust evaluates `[v; N]`'s `v` once; the fill loop below would repeat it.
                if must_run_once(value) {
                    let once = names::generated(&name, "value");
                    self.line(&format!("const {ty} {once} = {v};"));
                    v = once;
                }
                let end = if a.block_len.is_some() { format!("(u32){len}") } else { format!("{len}u") };
                self.line(&format!("for (u32 {i} = 0u; {i} < {end}; ++{i}) {name}[{i}] = {v};"));
            }
            ArrayInit::Chunk { chunk, .. } => {
                let source = &self.k.array(chunk.array).name;
                self.line(&format!("// {source}.load_chunk::<{}>(…), line {}", chunk.len, chunk.line));
                // Zeros where a bounds check skips the load, as on the emulator.
                let zeroed = if self.checked { " = {}" } else { "" };
                self.line(&format!("{ty} {name}[{len}]{zeroed};"));
                let helper = self.chunk_helper(chunk, "load_chunk");
                let load = format!("gsync::{helper}<{}>({name}, {});", chunk_bytes(a, chunk), self.chunk_start(chunk));
                self.chunk_access(chunk, &load);
            }
        }
    }

    /// `a.store_chunk(c, v);`: the thread's array `from` into chunk `c` of `a`.
    fn store_chunk(&mut self, chunk: &Chunk, from: ArrayId) {
        let (target, from_rust) = (&self.k.array(chunk.array).name, &self.k.array(from).name);
        self.line(&format!("// {target}.store_chunk(…, {from_rust}), line {}", chunk.line));
        let from_name = cuda_names::array(self.k, from);
        let bytes = chunk_bytes(self.k.array(from), chunk);
        let helper = self.chunk_helper(chunk, "store_chunk");
        let store = format!("gsync::{helper}<{bytes}>({}, {from_name});", self.chunk_start(chunk));
        self.chunk_access(chunk, &store);
    }

    /// `a.copy_chunk_async::<N>(c, source, s);`: chunk `s` of `source` into chunk `c` of the
    /// shared array `a`, by `cp.async`; with bounds checks, both chunks must be in bounds (the
    /// target's checked first).
    fn copy_chunk_async(&mut self, chunk: &Chunk, source: &Chunk) {
        let (target, source_rust) = (&self.k.array(chunk.array).name, &self.k.array(source.array).name);
        self.line(&format!("// {target}.copy_chunk_async::<{}>(…, {source_rust}, …), line {}", chunk.len, chunk.line));
        let bytes = chunk_bytes(self.k.array(chunk.array), chunk);
        let copy =
            format!("gsync::copy_chunk_async<{bytes}>({}, {});", self.chunk_start(chunk), self.chunk_start(source));
        if self.checked {
            let (target_in, source_in) = (self.chunk_check(chunk), self.chunk_check(source));
            self.line(&format!("if ({target_in} && {source_in}) {copy}"));
        } else {
            self.line(&copy);
        }
    }

    /// The prelude's copy for a chunk: `aligned` (`load_chunk` or `store_chunk`) for a slice
    /// or shared array, `copy_chunk` for a thread's own array, aligned only to its element.
    fn chunk_helper(&self, chunk: &Chunk, aligned: &'static str) -> &'static str {
        if self.k.array(chunk.array).space == ArraySpace::Local {
            "copy_chunk"
        } else {
            aligned
        }
    }

    /// The address of a chunk's first element.
    fn chunk_start(&self, chunk: &Chunk) -> String {
        let (array, index) = (cuda_names::array(self.k, chunk.array), cuda_names::var(self.k, chunk.index));
        format!("{array} + (usize){index} * {}ull", chunk.len)
    }

    /// `access` of `chunk`, behind its bounds check where the kernel checks bounds.
    fn chunk_access(&mut self, chunk: &Chunk, access: &str) {
        if self.checked {
            let check = self.chunk_check(chunk);
            self.line(&format!("if ({check}) {access}"));
        } else {
            self.line(access);
        }
    }

    /// Whether `chunk` lies within its array, recording the fault where it does not.
    fn chunk_check(&self, chunk: &Chunk) -> String {
        let index = cuda_names::var(self.k, chunk.index);
        let (n, len, array, line) = (chunk.len, self.len_of(chunk.array), chunk.array.0, chunk.line);
        format!("gsync::chunk_in_bounds((u64){index}, {n}ull, {len}, gsync_status, {array}u, {line}u)")
    }

    /// `place = value` or `place op= value`.
    fn assign(&mut self, place: &Place, op: Option<BinOp>, value: &Expr) {
        match place {
            Place::Var(v) => {
                let var = self.k.var(*v);
                let ty = var.ty;
                let name = cuda_names::var(self.k, *v);
                let code = self.expr(value);
                let stmt = self.assignment(&name, ty, op, value, code);
                self.line(&stmt);
            }
            Place::Elem { array, index, line } => {
                let a = self.k.array(*array);
                let (ty, array_name) = (a.elem, cuda_names::array(self.k, *array));
                // The element's index appears twice (bounds check, access), and
                // the value runs only in bounds: one that must run exactly once,
                // in every thread, is bound first, value before index as in Rust.
                let index_once = must_run_once(index);
                let value_first = (self.checked && must_run_once(value)) || (index_once && !self.is_stable(value));
                let scoped = value_first || index_once;
                if scoped {
                    self.open("");
                }
                let code = if value_first {
                    let v = self.expr(value).text;
                    let once = names::generated(&array_name, "value");
                    self.line(&format!("const {} {once} = {v};", value.ty.name()));
                    Code::primary(once)
                } else {
                    self.expr(value)
                };
                let idx = if index_once {
                    let i = self.expr(index).text;
                    let once = names::generated(&array_name, "index");
                    self.line(&format!("const {} {once} = {i};", index.ty.name()));
                    once
                } else {
                    self.expr(index).text
                };
                let target = format!("{array_name}[{idx}]");
                let stmt = self.assignment(&target, ty, op, value, code);
                if self.checked {
                    let guard = self.in_bounds(*array, &idx, *line);
                    self.line(&format!("if ({guard}) {stmt}"));
                } else {
                    self.line(&stmt);
                }
                if scoped {
                    self.close();
                }
            }
        }
    }

    /// `target = value` with `value` (emitted as `code`) combined by `op`.
    fn assignment(&mut self, target: &str, ty: Scalar, op: Option<BinOp>, value: &Expr, code: Code) -> String {
        let Some(op) = op else {
            return format!("{target} = {};", code.text);
        };
        let direct = match op {
            BinOp::Add | BinOp::Sub | BinOp::Mul => wraps_natively(ty) || ty.is_float() || ty.is_half(),
            BinOp::Div => ty.is_float() || ty.is_half(),
            BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor => bitwise_natively(ty),
            _ => false,
        };
        if direct {
            return format!("{target} {}= {};", op.symbol(), code.text);
        }
        let current = Code::primary(target.to_string());
        let combined = self.binary_code(op, ty, current, code, value);
        format!("{target} = {};", combined.text)
    }

    fn in_bounds(&self, array: ArrayId, index: &str, line: u32) -> String {
        format!("gsync::in_bounds({index}, {}, gsync_status, {}u, {line}u)", self.len_of(array), array.0)
    }

    fn len_of(&self, array: ArrayId) -> String {
        let a = self.k.array(array);
        match a.space {
            ArraySpace::Global | ArraySpace::DynamicShared => {
                names::generated(&cuda_names::array(self.k, array), "len")
            }
            _ if a.block_len.is_some() => array_len(a),
            _ => format!("{}ull", a.len.unwrap_or(0)),
        }
    }

    /// An expression statement (an atomic whose result is unused).
    fn effect(&mut self, e: &Expr) {
        if let ExprKind::Atomic { op, array, index, args, line, order } = &e.kind {
            let call = self.atomic_call(*op, *order, *array, index, args);
            match self.atomic_guard(*op, *array, index, args, *line) {
                Some(guard) => self.line(&format!("if ({guard}) {call};")),
                None => self.line(&format!("{call};")),
            }
            return;
        }
        let text = self.expr(e).text;
        self.line(&format!("{text};"));
    }

    fn atomic_call(&mut self, op: AtomicOp, order: MemoryOrder, array: ArrayId, index: &Expr, args: &[Expr]) -> String {
        let idx = self.expr(index).text;
        let element = format!("&{}[{idx}]", cuda_names::array(self.k, array));
        let mut args = args.iter().map(|a| self.expr(a).text);
        let mut parts = match op {
            // The element's copy on the PE named first.
            AtomicOp::Get | AtomicOp::Put | AtomicOp::Signal => {
                let pe = args.next().unwrap_or_default();
                vec![format!("gsync::on_pe({element}, {pe})")]
            }
            _ => vec![element],
        };
        parts.extend(args);
        format!("{}({})", cuda_ops::atomic_helper(op, order), parts.join(", "))
    }

    /// The guard of an atomic's element: its index in bounds where the kernel checks them,
    /// and for `get`, `put` and `signal` its PE in the team, in every build (`None`: no guard).
    fn atomic_guard(&mut self, op: AtomicOp, array: ArrayId, index: &Expr, args: &[Expr], line: u32) -> Option<String> {
        let on_team = match op {
            AtomicOp::Get | AtomicOp::Put | AtomicOp::Signal => {
                let pe = self.expr(&args[0]).text;
                Some(format!("gsync::on_team({pe}, gsync_status, {}u, {line}u)", array.0))
            }
            _ => None,
        };
        let in_bounds = self.checked.then(|| {
            let idx = self.expr(index).text;
            self.in_bounds(array, &idx, line)
        });
        match (on_team, in_bounds) {
            (Some(team), Some(bounds)) => Some(format!("{team} && {bounds}")),
            (one, other) => one.or(other),
        }
    }

    fn for_loop(&mut self, var: VarId, range: &ForRange, body: &Block) {
        let v = self.k.var(var);
        let ty = v.ty;
        let (t, x) = (ty.name(), cuda_names::var(self.k, var));
        let helper = |role: &str| names::generated(&x, role);
        match range {
            ForRange::Seq { start, end, inclusive: false, step: None, reverse: false } => {
                let s = self.expr(start).text;
                let (end_decl, end_name) = self.hoisted(end, &helper("end"));
                if contains_grid_sync(body) {
                    self.keep_rolled_over_phases(body);
                } else if let (ExprKind::Int(first), ExprKind::Int(last)) = (&start.kind, &end.kind) {
                    // A short constant range typically indexes a local array: unrolled, the
                    // array's indices are constants and it can live in registers.
                    if (1..=MAX_UNROLLED_TRIPS).contains(&(last - first)) {
                        self.line("#pragma unroll");
                    }
                }
                self.open(&format!("for ({t} {x} = {s}{end_decl}; {x} < {end_name}; ++{x})"));
                self.block_body(body);
            }
            ForRange::Seq { start, end, inclusive: true, .. } => {
                // A 64-bit counter reaches `end` even when `end` is the type's MAX.
                let (s, e) = (self.expr(start).at(prec::UNARY), self.expr(end).at(prec::UNARY));
                let (wide, last) = (helper("wide"), helper("last"));
                self.keep_rolled_over_phases(body);
                self.open(&format!("for (i64 {wide} = (i64){s}, {last} = (i64){e}; {wide} <= {last}; ++{wide})"));
                self.line(&format!("const {t} {x} = ({t}){wide};"));
                self.block_body(body);
            }
            ForRange::Seq { start, end, step: Some(step), .. } => {
                let (mut s, mut e) = (self.expr(start).text, self.expr(end).text);
                let step_line = crate::diagnostics::line_of(step.span);
                let mut step_name = self.expr(step).text;
                let end_name = helper("end");
                // A step that may change is bound once, in a block around the
                // loop, after the bounds Rust evaluates before it.
                let scoped = !self.is_stable(step);
                if scoped {
                    self.open("");
                    if !self.is_stable(start) {
                        let start_name = helper("start");
                        self.line(&format!("const {t} {start_name} = {s};"));
                        s = start_name;
                    }
                    if !self.is_stable(end) {
                        let bound_name = helper("bound");
                        self.line(&format!("const {t} {bound_name} = {e};"));
                        e = bound_name;
                    }
                    let hoisted = helper("step");
                    self.line(&format!("const usize {hoisted} = {step_name};"));
                    step_name = hoisted;
                }
                self.keep_rolled_over_phases(body);
                self.open(&format!(
                    "for ({t} {x} = {s}, {end_name} = {e}; gsync::step_continues({x}, {end_name}, {step_name}, gsync_status, {step_line}u); {x} = gsync::step_toward({x}, {end_name}, {step_name}))"
                ));
                self.block_body(body);
                if scoped {
                    self.close();
                }
            }
            ForRange::Seq { start, end, reverse: true, .. } => {
                let e = self.expr(end).text;
                let next = helper("next");
                let (start_decl, start_name) = self.hoisted(start, &helper("start"));
                self.keep_rolled_over_phases(body);
                self.open(&format!("for ({t} {next} = {e}{start_decl}; {next} > {start_name}; )"));
                self.line(&format!("const {t} {x} = --{next};"));
                self.block_body(body);
            }
            ForRange::GridStride { start, end } | ForRange::BlockStride { start, end } => {
                let grid = matches!(range, ForRange::GridStride { .. });
                let (first, stride) = if self.multi_dim {
                    if grid {
                        (format!("({})", dims::LINEAR_GLOBAL_ID), dims::LINEAR_GRID_SIZE.to_owned())
                    } else {
                        ("gsync_linear_thread()".to_owned(), "gsync_block_threads()".to_owned())
                    }
                } else if grid {
                    ("(blockIdx.x * blockDim.x + threadIdx.x)".to_owned(), "blockDim.x * gridDim.x".to_owned())
                } else {
                    ("threadIdx.x".to_owned(), "blockDim.x".to_owned())
                };
                // 32-bit counters run in 64 bits so that `+= stride` cannot wrap past `end`.
                let wide = match ty {
                    Scalar::U32 => Some("u64"),
                    Scalar::I32 => Some("i64"),
                    _ => None,
                };
                let s = self.expr(start).at(prec::UNARY);
                match wide {
                    Some(w) => {
                        let (counter, end_name) = (helper("wide"), helper("end"));
                        let e = self.expr(end).at(prec::UNARY);
                        self.open(&format!("for ({w} {counter} = ({w}){s} + {first}, {end_name} = ({w}){e}; {counter} < {end_name}; {counter} += {stride})"));
                        self.line(&format!("const {t} {x} = ({t}){counter};"));
                        self.block_body(body);
                    }
                    None => {
                        let (e, end_name) = (self.expr(end).text, helper("end"));
                        self.open(&format!(
                            "for ({t} {x} = {s} + {first}, {end_name} = {e}; {x} < {end_name}; {x} += {stride})"
                        ));
                        self.block_body(body);
                    }
                }
            }
        }
        self.close();
    }

    /// A loop bound Rust evaluates once: inline if re-evaluating it cannot
    /// change it, else a hidden variable declared in the `for` header.
    fn hoisted(&mut self, e: &Expr, name: &str) -> (String, String) {
        let code = self.expr(e);
        if self.is_stable(e) {
            (String::new(), code.text)
        } else {
            (format!(", {name} = {}", code.text), name.to_string())
        }
    }

    /// Whether an expression has the same value wherever it is evaluated in
    /// the loop: no mutable variables, no memory reads, no atomics.
    fn is_stable(&self, e: &Expr) -> bool {
        let mut stable = true;
        crate::ir_walk::each_expr(e, &mut |x| match &x.kind {
            ExprKind::Var(v) if self.k.var(*v).mutable => stable = false,
            ExprKind::Load { .. } | ExprKind::Atomic { .. } | ExprKind::Shuffle { .. } | ExprKind::Vote { .. } => {
                stable = false
            }
            _ => {}
        });
        stable
    }

    fn expr(&mut self, e: &Expr) -> Code {
        crate::stack::deep(|| self.expr_inner(e))
    }

    fn expr_inner(&mut self, e: &Expr) -> Code {
        let ty = e.ty;
        match &e.kind {
            ExprKind::Int(v) => int_literal(*v, ty),
            ExprKind::Float(v) => float_literal(*v, ty),
            ExprKind::Bool(b) => Code::primary(b.to_string()),
            ExprKind::Var(v) => Code::primary(cuda_names::var(self.k, *v)),
            ExprKind::Builtin(b) if self.multi_dim => Code::primary(dims::multi_dim_cuda(*b)),
            ExprKind::Builtin(b) => Code::primary(
                match b {
                    Builtin::ThreadIdx => "threadIdx.x",
                    Builtin::BlockIdx => "blockIdx.x",
                    Builtin::BlockDim => "blockDim.x",
                    Builtin::GridDim => "gridDim.x",
                    Builtin::GlobalId => "(blockIdx.x * blockDim.x + threadIdx.x)",
                    Builtin::GridSize => "(blockDim.x * gridDim.x)",
                    Builtin::LaneId => "(threadIdx.x & 31u)",
                    Builtin::WarpSize => "32u",
                    Builtin::WarpId => "(threadIdx.x >> 5)",
                    Builtin::BlockSize => crate::emit::block_size::CUDA,
                    Builtin::Pe | Builtin::NPes => dims::team_builtin(*b),
                    // A kernel that reads one is compiled with GSYNC_MULTI_DIM (the arm above).
                    Builtin::ThreadIdxAxis(_)
                    | Builtin::BlockIdxAxis(_)
                    | Builtin::BlockDimAxis(_)
                    | Builtin::GridDimAxis(_) => return Code::primary(dims::multi_dim_cuda(*b)),
                }
                .to_string(),
            ),
            ExprKind::Len(a) => Code::primary(self.len_of(*a)),
            ExprKind::Unary(op, a) => self.unary(*op, ty, a),
            ExprKind::Binary(op, a, b) => {
                let operand_ty = a.ty;
                let (l, r) = (self.expr(a), self.expr(b));
                self.binary_code(*op, operand_ty, l, r, b)
            }
            ExprKind::Cast(inner) => {
                let from = inner.ty;
                let code = self.expr(inner);
                if from == ty {
                    code
                } else if from.is_float() && ty.is_int() {
                    Code::primary(format!("gsync::float_to_int<{}>({})", ty.name(), code.text))
                } else {
                    Code { text: format!("({}){}", ty.name(), code.at(prec::UNARY)), prec: prec::UNARY }
                }
            }
            ExprKind::Load { array, index, line } => {
                let name = cuda_names::array(self.k, *array);
                let idx = self.expr(index).text;
                if self.checked {
                    Code::primary(format!(
                        "gsync::load({name}, {}, {idx}, gsync_status, {}u, {line}u)",
                        self.len_of(*array),
                        array.0
                    ))
                } else {
                    Code::primary(format!("{name}[{idx}]"))
                }
            }
            ExprKind::Call { func, args } => {
                let operand = args.first().map_or(ty, |a| a.ty);
                let template = cuda_ops::math_template(*func, operand, ty);
                let args: Vec<Code> = args.iter().map(|a| self.expr(a)).collect();
                fill_template(template, args)
            }
            ExprKind::Atomic { op, array, index, args, line, order } => {
                let call = self.atomic_call(*op, *order, *array, index, args);
                match self.atomic_guard(*op, *array, index, args, *line) {
                    Some(guard) => Code { text: format!("{guard} ? {call} : ({})0", ty.name()), prec: prec::TERNARY },
                    None => Code::primary(call),
                }
            }
            ExprKind::Shuffle { op, value, lane } => {
                let (v, l) = (self.expr(value).text, self.expr(lane).text);
                Code::primary(format!("{}({v}, {l})", cuda_ops::shuffle_helper(*op)))
            }
            ExprKind::Select { cond, then, otherwise } => {
                let c = self.expr(cond);
                let c = if c.prec < prec::PRIMARY && c.prec != prec::UNARY { format!("({})", c.text) } else { c.text };
                let t = self.expr(then).at(prec::TERNARY + 1);
                let o = self.expr(otherwise).at(prec::TERNARY);
                Code { text: format!("{c} ? {t} : {o}"), prec: prec::TERNARY }
            }
            ExprKind::Vote { op, value } => {
                let v = self.expr(value).text;
                Code::primary(format!("gsync::{}({v})", op.name()))
            }
        }
    }

    fn unary(&mut self, op: UnOp, ty: Scalar, a: &Expr) -> Code {
        let code = self.expr(a);
        match op {
            UnOp::Neg if ty.is_float() || ty.is_half() => {
                // `-(-x)` must not become `--x`, C's decrement.
                let operand = code.at(prec::UNARY);
                let operand = if operand.starts_with('-') { format!("({operand})") } else { operand };
                Code { text: format!("-{operand}"), prec: prec::UNARY }
            }
            UnOp::Neg => Code::primary(format!("gsync::neg({})", code.text)),
            UnOp::Not if ty == Scalar::Bool => Code { text: format!("!{}", code.at(prec::UNARY)), prec: prec::UNARY },
            UnOp::Not if bitwise_natively(ty) => Code { text: format!("~{}", code.at(prec::UNARY)), prec: prec::UNARY },
            UnOp::Not => Code::primary(format!("gsync::bit_not({})", code.text)),
        }
    }

    /// `l op r` on operands of type `ty`, with Rust's meaning.
    fn binary_code(&mut self, op: BinOp, ty: Scalar, l: Code, r: Code, rhs: &Expr) -> Code {
        let helper = |name: &str, l: Code, r: Code| Code::primary(format!("gsync::{name}({}, {})", l.text, r.text));
        match op {
            BinOp::Add | BinOp::Sub | BinOp::Mul if !(wraps_natively(ty) || ty.is_float() || ty.is_half()) => {
                let name = match op {
                    BinOp::Add => "add",
                    BinOp::Sub => "sub",
                    _ => "mul",
                };
                helper(name, l, r)
            }
            // A literal divisor other than 0 and -1 cannot trap: C's operator is Rust's.
            BinOp::Div | BinOp::Rem
                if ty.is_int() && ty.bits() >= 32 && matches!(rhs.kind, ExprKind::Int(d) if d != 0 && d != -1) =>
            {
                self.infix(op, l, r)
            }
            BinOp::Div if ty.is_int() => helper("div", l, r),
            BinOp::Rem => helper("rem", l, r),
            BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor if !bitwise_natively(ty) => {
                let name = match op {
                    BinOp::BitAnd => "bit_and",
                    BinOp::BitOr => "bit_or",
                    _ => "bit_xor",
                };
                helper(name, l, r)
            }
            BinOp::Shl | BinOp::Shr => {
                let literal_in_range = matches!(rhs.kind, ExprKind::Int(n) if n >= 0 && n < ty.bits() as i128);
                let natural = literal_in_range && (wraps_natively(ty) || (op == BinOp::Shr && bitwise_natively(ty)));
                if natural {
                    return self.infix(op, l, r);
                }
                let amount = if rhs.ty == Scalar::U32 { r.text } else { format!("(u32){}", r.at(prec::UNARY)) };
                let name = if op == BinOp::Shl { "shl" } else { "shr" };
                Code::primary(format!("gsync::{name}({}, {amount})", l.text))
            }
            _ => self.infix(op, l, r),
        }
    }

    fn infix(&self, op: BinOp, l: Code, r: Code) -> Code {
        let p = binop_prec(op);
        // Beyond what C++ needs, parenthesize operands of bitwise operators,
        // shifts and `||` that are themselves operations, so that readers
        // need not recall C's precedence table.
        let bitwise_or_shift = matches!(p, 6 | 7 | 8 | 11);
        let needs_clarity = |c: &Code| {
            bitwise_or_shift && c.prec < prec::UNARY && c.prec != p
                || (p == prec::LOGICAL_OR && c.prec == prec::LOGICAL_AND)
        };
        let wrap = |c: Code, min: u8| if needs_clarity(&c) { format!("({})", c.text) } else { c.at(min) };
        Code { text: format!("{} {} {}", wrap(l, p), op.symbol(), wrap(r, p + 1)), prec: p }
    }
}

/// Whether an expression must run exactly once, in every thread that reaches
/// it: it has an atomic or a collective in it.
fn must_run_once(e: &Expr) -> bool {
    let mut found = false;
    crate::ir_walk::each_expr(e, &mut |x| {
        found |= matches!(x.kind, ExprKind::Atomic { .. }) || Collective::of_expr(&x.kind).is_some()
    });
    found
}

fn int_literal(v: i128, ty: Scalar) -> Code {
    let (min, _) = ty.int_range();
    let text = match ty {
        Scalar::I32 if v == min => "(-2147483647 - 1)".to_string(),
        Scalar::I64 if v == min => "(-9223372036854775807ll - 1)".to_string(),
        Scalar::I32 => v.to_string(),
        Scalar::U32 => format!("{v}u"),
        Scalar::I64 => format!("{v}ll"),
        Scalar::U64 | Scalar::Usize => format!("{v}ull"),
        other => {
            return Code {
                text: format!("({}){}", other.name(), if v < 0 { format!("({v})") } else { v.to_string() }),
                prec: prec::UNARY,
            }
        }
    };
    let prec = if v < 0 || text.starts_with('(') { prec::UNARY } else { prec::PRIMARY };
    Code { text, prec }
}

fn float_literal(v: f64, ty: Scalar) -> Code {
    if ty.is_half() {
        // Half precision has no C++ literals: the value's bits, exactly.
        let bits = crate::ir::half_bits(v, ty);
        return Code::primary(format!("gsync::{}_from_bits({bits:#06x})", ty.name()));
    }
    let f32 = ty == Scalar::F32;
    let text = if v.is_nan() {
        if f32 {
            "__int_as_float(0x7fc00000)".into()
        } else {
            "__longlong_as_double(0x7ff8000000000000ll)".into()
        }
    } else if v.is_infinite() {
        match (f32, v > 0.0) {
            (true, true) => "__int_as_float(0x7f800000)".into(),
            (true, false) => "__int_as_float((i32)0xff800000u)".into(),
            (false, true) => "__longlong_as_double(0x7ff0000000000000ll)".into(),
            (false, false) => "__longlong_as_double((i64)0xfff0000000000000ull)".into(),
        }
    } else if f32 {
        format!("{:?}f", v as f32)
    } else {
        format!("{v:?}")
    };
    let prec = if text.starts_with('-') { prec::UNARY } else { prec::PRIMARY };
    Code { text, prec }
}

/// Substitutes `{0}`, `{1}`, … in a method template, parenthesizing an
/// argument unless it sits alone between `(`/`,` and `)`/`,`.
fn fill_template(template: &str, args: Vec<Code>) -> Code {
    let mut text = template.to_string();
    for (i, arg) in args.into_iter().enumerate() {
        let slot = format!("{{{i}}}");
        while let Some(pos) = text.find(&slot) {
            let before = text[..pos].trim_end().chars().last();
            let after = text[pos + slot.len()..].trim_start().chars().next();
            let alone = matches!(before, Some('(' | ',')) && matches!(after, Some(')' | ','));
            let replacement =
                if alone || arg.prec >= prec::PRIMARY { arg.text.clone() } else { format!("({})", arg.text) };
            text.replace_range(pos..pos + slot.len(), &replacement);
        }
    }
    let prec = if text.starts_with('(') && !fully_parenthesized(&text) { prec::UNARY } else { prec::PRIMARY };
    Code { text, prec }
}

fn fully_parenthesized(text: &str) -> bool {
    let mut depth = 0;
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 && i != text.len() - 1 {
                    return false;
                }
            }
            _ => {}
        }
    }
    true
}

/// The bytes of a chunk of `a`'s elements.
fn chunk_bytes(a: &Array, chunk: &Chunk) -> u64 {
    chunk.len * u64::from(a.elem.bits() / 8)
}
