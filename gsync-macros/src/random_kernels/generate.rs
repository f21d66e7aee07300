//! Random kernels as Rust source: nests of statements and expressions over
//! every scalar type, mostly well typed (so that most reach the emitters),
//! with hostile names throughout and an occasional construct the DSL rejects.
//!
//! Some cases the macro must refuse with a spanned error are generated on
//! purpose, now and then: shuffles in conditionally evaluated operands (`&&`,
//! `||`, `if`-values), `step_by(0)`, shared arrays beyond 48 KiB. Others must
//! work: `-0.0` as a method receiver, atomics under conditions, and chains of
//! thousands of operands.

use rand::seq::SliceRandom;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// The DSL's scalar types, as the macro itself names them.
use crate::ir::Scalar as Ty;
use crate::ir::Scalar::*;

// The primitive types: half precision has no literals or `as` casts for the generator to use.
const ALL: [Ty; 12] =
    [Ty::Bool, Ty::I8, Ty::U8, Ty::I16, Ty::U16, Ty::I32, Ty::U32, Ty::I64, Ty::U64, Ty::Usize, Ty::F32, Ty::F64];
const NUMERIC: [Ty; 11] = [I8, U8, I16, U16, I32, U32, I64, U64, Usize, F32, F64];
const INTS: [Ty; 9] = [I8, U8, I16, U16, I32, U32, I64, U64, Usize];
const SLICE_ELEMS: [Ty; 10] = [I8, U8, I16, U16, I32, U32, I64, U64, F32, F64];

/// The unsigned type of a signed integer's width; other types unchanged.
fn unsigned(t: Ty) -> Ty {
    match t {
        I8 => U8,
        I16 => U16,
        I32 => U32,
        I64 => U64,
        t => t,
    }
}

/// Names that meet something in C++, CUDA, the prelude or the generated code,
/// and ordinary ones.
const NAMES: &[&str] = &[
    // ordinary
    "a",
    "b",
    "c",
    "i",
    "j",
    "k",
    "n",
    "x",
    "y",
    "acc",
    "sum",
    "tmp",
    "out",
    "data",
    "idx",
    "value",
    "index",
    // C++ keywords and alternative tokens
    "static_cast",
    "and_eq",
    "typeid",
    "class",
    "new",
    "delete",
    "int",
    "float",
    "double",
    "char",
    "long",
    "short",
    "signed",
    "unsigned",
    "register",
    "template",
    "this",
    "operator",
    "namespace",
    "auto",
    "volatile",
    "goto",
    "sizeof",
    "nullptr",
    "co_await",
    "concept",
    "requires",
    "char8_t",
    "bitor",
    "not_eq",
    "xor_eq",
    "typename",
    "switch",
    "case",
    "default",
    "inline",
    "friend",
    "private",
    "public",
    "explicit",
    "export",
    // CUDA and C names
    "sqrtf",
    "tanhf",
    "fminf",
    "fmaxf",
    "expf",
    "powf",
    "isnan",
    "isinf",
    "threadIdx",
    "blockIdx",
    "blockDim",
    "gridDim",
    "warpSize",
    "atomicAdd",
    "atomicCAS",
    "printf",
    "malloc",
    "assert",
    "min",
    "max",
    "abs",
    "__syncthreads",
    "__shfl_sync",
    "make_float2",
    "float2",
    "dim3",
    "va_end",
    "va_start",
    "INFINITY",
    "NAN",
    "NULL",
    "size_t",
    "uint32_t",
    "__restrict__",
    "__global__",
    // the prelude and the generated code
    "GSYNC_OK",
    "GSYNC_BLOCK_SIZE",
    "GSYNC_OUT_OF_BOUNDS",
    "GSYNC_NARROW_SHUFFLES",
    "GSYNC_LINE_SLOTS",
    "gsync",
    "gsync_status",
    "gsync_barrier",
    "gsync_barrier_state",
    "gsync_status_t",
    "gsync_next_launch",
    "gsync_next_launch_t",
    "gsync_grid_sync",
    "gsync_barrier_begin",
    "gsync_profile",
    "gsync_profile_records",
    "GSYNC_PROFILE_BEGIN",
    "u32",
    "i8",
    "usize",
    "f64",
    "a_len",
    "gsync_a_len",
    "i_end",
    "gsync_i_end",
    "gsync_x_wide",
    "x_2",
    "x_2_",
    "gsync_k_fill",
    "KERNEL",
    "launch",
    "launch_with",
    "emulate",
    "multi_launch",
    "cuda_source",
    "functions",
    "gpu",
    "args",
    "ctx",
    "memory",
    "run",
    "wide",
    "Memory",
    // raw and non-ASCII identifiers, and underscores C++ reserves
    "r#for",
    "r#type",
    "r#match",
    "r#loop",
    "r#fn",
    "r#struct",
    "r#in",
    "r#as",
    "r#new",
    "größe",
    "λ",
    "ö",
    "日本",
    "𝑥",
    "_n",
    "__x",
    "a__b",
    "n_",
    "X",
    "Xu0041",
    "_X",
];

/// A name in scope.
#[derive(Clone)]
enum Binding {
    Var { ty: Ty, mutable: bool },
    Const { ty: Ty },
    Array { elem: Ty, mutable: bool, len: Option<u64> },
}

/// The device functions every random kernel sees: one that computes, two with an assertion
/// inside (one with a result, one without), and one that reads memory another thread changes.
pub const DEVICE_FUNCTIONS: &str = "\
#[device]
fn gen_twice(x: u32) -> u32 {
    x * 2
}
#[device]
fn gen_checked(x: u32) -> u32 {
    assert!(x != 77, \"seventy-seven\");
    x + 1
}
#[device]
fn gen_note(x: u32) {
    assert!(x != 78, \"seventy-eight\");
}
#[device]
fn gen_ready(flags: &[u32]) -> bool {
    flags.load_acquire(0) != 0
}
";

pub struct Generator<'r> {
    rng: &'r mut ChaCha8Rng,
    /// Whether the kernel takes the slices `gen_flags` (for `wait_until`) and `gen_locks`
    /// (for `with_lock`), which no other statement touches.
    communicates: bool,
    scopes: Vec<Vec<(String, Binding)>>,
    loops: usize,
    /// Statements still to emit.
    budget: usize,
    out: String,
    indent: usize,
}

/// A random kernel, with its `#[grid_phases(...)]` attribute, after a comment line and the
/// [`DEVICE_FUNCTIONS`] it may call.
pub fn kernel(rng: &mut ChaCha8Rng, case: usize) -> String {
    let mut g = Generator {
        rng,
        communicates: false,
        scopes: vec![Vec::new()],
        loops: 0,
        budget: 0,
        out: String::new(),
        indent: 1,
    };
    g.budget = g.rng.gen_range(2..16);
    let args = match g.rng.gen_range(0..20) {
        0 => format!("threads = {}", g.rng.gen_range(1..=1024)),
        1 => ["threads = 0", "threads = 4096", "threads = x", "blocks = 2"].choose(g.rng).unwrap().to_string(),
        _ => String::new(),
    };
    let name = if g.rng.gen_bool(0.3) { g.name() } else { format!("k{case}") };
    let mut params = Vec::new();
    for _ in 0..g.rng.gen_range(0..5) {
        let name = g.name();
        if g.rng.gen_bool(0.5) {
            let elem = *SLICE_ELEMS.choose(g.rng).unwrap();
            let mutable = g.rng.gen_bool(0.7);
            params.push(format!("{name}: &{}[{}]", if mutable { "mut " } else { "" }, elem.name()));
            g.bind(name, Binding::Array { elem, mutable, len: None });
        } else {
            let ty = *ALL.choose(g.rng).unwrap();
            let mutable = g.rng.gen_bool(0.2);
            params.push(format!("{}{name}: {}", if mutable { "mut " } else { "" }, ty.name()));
            g.bind(name, Binding::Var { ty, mutable });
        }
    }
    if g.rng.gen_bool(0.4) {
        g.communicates = true;
        params.push("gen_flags: &mut [u32]".into());
        params.push("gen_locks: &mut [u32]".into());
    }
    if g.rng.gen_bool(0.2) {
        // Shared arrays live at the top level.
        let name = g.name();
        let elem = *SLICE_ELEMS.iter().chain(&[Usize]).collect::<Vec<_>>().choose(g.rng).copied().unwrap();
        let len = *[1u64, 32, 256, 1 << 15].choose(g.rng).unwrap();
        g.line(format!("let mut {name} = shared_array::<{}, {len}>();", elem.name()));
        g.bind(name, Binding::Array { elem, mutable: true, len: Some(len) });
    }
    while g.budget > 0 {
        g.stmt();
    }
    format!(
        "// case {case}\n{DEVICE_FUNCTIONS}#[grid_phases({args})]\nfn {name}({}) {{\n{}}}\n",
        params.join(", "),
        g.out
    )
}

impl Generator<'_> {
    fn name(&mut self) -> String {
        NAMES.choose(self.rng).unwrap().to_string()
    }

    fn bind(&mut self, name: String, b: Binding) {
        self.scopes.last_mut().unwrap().push((name, b));
    }

    /// The visible bindings: the latest of each name (raw or not).
    fn visible(&self) -> Vec<(String, Binding)> {
        let mut seen = std::collections::HashSet::new();
        let mut out = Vec::new();
        for (name, b) in self.scopes.iter().rev().flat_map(|s| s.iter().rev()) {
            if seen.insert(name.strip_prefix("r#").unwrap_or(name).to_string()) {
                out.push((name.clone(), b.clone()));
            }
        }
        out
    }

    fn line(&mut self, text: String) {
        for _ in 0..self.indent {
            self.out.push_str("    ");
        }
        self.out.push_str(&text);
        self.out.push('\n');
    }

    fn block(&mut self, header: String, body: impl FnOnce(&mut Self)) {
        self.line(format!("{header} {{"));
        self.indent += 1;
        self.scopes.push(Vec::new());
        body(self);
        self.scopes.pop();
        self.indent -= 1;
        self.line("}".into());
    }

    /// A few statements for a nested block.
    fn stmts(&mut self) {
        for _ in 0..self.rng.gen_range(1..4) {
            if self.budget == 0 {
                break;
            }
            self.stmt();
        }
    }

    fn stmt(&mut self) {
        self.budget = self.budget.saturating_sub(1);
        let nested = self.indent < 5;
        match self.rng.gen_range(0..29) {
            0..=3 => {
                let name = self.name();
                let ty = *ALL.choose(self.rng).unwrap();
                let (mut e, mut typed) = self.expr(ty, 3);
                if ty.is_int() && self.rng.gen_bool(0.02) {
                    // A chain of thousands of operands: lowering and emission must not recurse per operand.
                    let (leaf, _) = self.typed_expr(ty, 0);
                    e = vec![leaf; self.rng.gen_range(1000..3000)].join(" ^ ");
                    typed = true;
                }
                let mutable = self.rng.gen_bool(0.5);
                let annotation =
                    if !typed || self.rng.gen_bool(0.3) { format!(": {}", ty.name()) } else { String::new() };
                self.line(format!("let {}{name}{annotation} = {e};", if mutable { "mut " } else { "" }));
                self.bind(name, Binding::Var { ty, mutable });
            }
            4 | 5 => self.assign(),
            6 => self.store(),
            7 if nested => {
                let (c, _) = self.expr(Bool, 3);
                self.block(format!("if {c}"), |g| g.stmts());
                if self.rng.gen_bool(0.5) {
                    self.block("else".into(), |g| g.stmts());
                }
            }
            8 | 9 if nested => self.for_loop(),
            10 if nested => {
                let (c, _) = self.expr(Bool, 2);
                self.loops += 1;
                self.block(format!("while {c}"), |g| g.stmts());
                self.loops -= 1;
            }
            11 if nested => {
                self.loops += 1;
                self.block("loop".into(), |g| {
                    g.stmts();
                    g.line("break;".into());
                });
                self.loops -= 1;
            }
            12 if self.loops > 0 => {
                let (c, _) = self.expr(Bool, 2);
                let jump = if self.rng.gen_bool(0.5) { "break" } else { "continue" };
                self.line(format!("if {c} {{ {jump}; }}"));
            }
            13 => self.line("sync_block();".into()),
            14 => self.line("grid_sync();".into()),
            15 => {
                let name = self.name();
                let ty = *NUMERIC.choose(self.rng).unwrap();
                let lit = self.literal(ty, true);
                self.line(format!("const {name}: {} = {lit};", ty.name()));
                self.bind(name, Binding::Const { ty });
            }
            16 => self.local_array(),
            17 => {
                if let Some(atomic) = self.atomic(None) {
                    self.line(format!("{atomic};"));
                }
            }
            18 if nested => {
                // An `if` value with statements in its branches.
                let name = self.name();
                let ty = *NUMERIC.choose(self.rng).unwrap();
                let (c, _) = self.expr(Bool, 2);
                let (a, _) = self.expr(ty, 2);
                let (b, _) = self.expr(ty, 2);
                let t = self.name();
                self.line(format!(
                    "let {name}: {} = if {c} {{ let {t}: {} = {a}; {t} }} else {{ {b} }};",
                    ty.name(),
                    ty.name()
                ));
                self.bind(name, Binding::Var { ty, mutable: false });
            }
            19 if self.rng.gen_bool(0.2) => self.line("return;".into()),
            21..=28 => self.call_in_a_conditional_position(nested),
            20 if self.rng.gen_bool(0.3) => self.invalid_stmt(),
            _ => {
                let name = self.name();
                self.block(String::new(), |g| {
                    g.stmts();
                    let _ = name;
                });
            }
        }
    }

    /// A device-function call where Rust evaluates it only sometimes: a `match` arm (value
    /// or statement), an `else if` condition, the right side of `&&`/`||`, an `if` value's
    /// branch, a `while` condition, a spin condition, or inside a lock.
    fn call_in_a_conditional_position(&mut self, nested: bool) {
        let u32_expr = |g: &mut Self| g.typed_expr(U32, 2).0;
        match self.rng.gen_range(0..8) {
            0 => {
                let (name, s, a, b, c) = (self.name(), u32_expr(self), u32_expr(self), u32_expr(self), u32_expr(self));
                self.line(format!(
                    "let {name}: u32 = match {s} {{ 0 => {a}, 1 | 2 => gen_twice({b}), _ => gen_checked({c}) }};"
                ));
                self.bind(name, Binding::Var { ty: U32, mutable: false });
            }
            1 => {
                let (s, a) = (u32_expr(self), u32_expr(self));
                self.line(format!("match {s} {{ 0 => gen_note({a}), _ => {{}} }}"));
            }
            2 if nested => {
                let (c, _) = self.expr(Bool, 2);
                let (a, b) = (u32_expr(self), u32_expr(self));
                self.block(format!("if {c}"), |g| g.stmts());
                self.block(format!("else if gen_checked({a}) > {b}"), |g| g.stmts());
                if self.rng.gen_bool(0.5) {
                    self.block("else".into(), |g| g.stmts());
                }
            }
            3 => {
                let name = self.name();
                let (c, _) = self.expr(Bool, 2);
                let (a, b) = (u32_expr(self), u32_expr(self));
                let op = if self.rng.gen_bool(0.5) { "&&" } else { "||" };
                self.line(format!("let {name}: bool = {c} {op} gen_twice({a}) > {b};"));
                self.bind(name, Binding::Var { ty: Bool, mutable: false });
            }
            4 => {
                let name = self.name();
                let (c, _) = self.expr(Bool, 2);
                let (a, b) = (u32_expr(self), u32_expr(self));
                self.line(format!(
                    "let {name}: u32 = if {c} {{ gen_checked({a}) }} else if gen_twice({b}) > 9 {{ 1 }} else {{ 2 }};"
                ));
                self.bind(name, Binding::Var { ty: U32, mutable: false });
            }
            5 if nested => {
                let (a, b) = (u32_expr(self), u32_expr(self));
                let (c, _) = self.expr(Bool, 2);
                self.loops += 1;
                self.block(format!("while gen_twice({a}) < {b} && {c}"), |g| {
                    g.stmts();
                    g.line("break;".into());
                });
                self.loops -= 1;
            }
            6 if self.communicates => self.line("wait_until(|| gen_ready(gen_flags));".into()),
            7 if self.communicates => {
                let (a, _) = self.expr(Bool, 2);
                let b = u32_expr(self);
                self.line(format!("gen_locks.with_lock(0, || {{ assert!({a}, \"locked\"); gen_note({b}); }});"));
            }
            _ => {
                let a = u32_expr(self);
                self.line(format!("gen_note({a});"));
            }
        }
    }

    fn assign(&mut self) {
        let targets: Vec<(String, Ty)> = self
            .visible()
            .into_iter()
            .filter_map(|(n, b)| match b {
                Binding::Var { ty, mutable: true } => Some((n, ty)),
                _ => None,
            })
            .collect();
        let Some((name, ty)) = targets.choose(self.rng).cloned() else { return self.store() };
        let op = self.compound_op(ty);
        let rhs_ty = if matches!(op, "<<=" | ">>=") { U32 } else { ty };
        let (e, _) = self.expr(rhs_ty, 3);
        self.line(format!("{name} {op} {e};"));
    }

    fn compound_op(&mut self, ty: Ty) -> &'static str {
        let ops: &[&str] = if ty.is_int() {
            &["=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="]
        } else if ty.is_float() {
            &["=", "+=", "-=", "*=", "/=", "%="]
        } else {
            &["=", "&=", "|=", "^="]
        };
        ops.choose(self.rng).unwrap()
    }

    /// `array[index] op= value;`
    fn store(&mut self) {
        let targets: Vec<(String, Ty)> = self
            .visible()
            .into_iter()
            .filter_map(|(n, b)| match b {
                Binding::Array { elem, mutable: true, .. } => Some((n, elem)),
                _ => None,
            })
            .collect();
        let Some((name, elem)) = targets.choose(self.rng).cloned() else { return };
        let index = self.index();
        let op = self.compound_op(elem);
        let rhs_ty = if matches!(op, "<<=" | ">>=") { U32 } else { elem };
        let (e, _) = self.expr(rhs_ty, 3);
        self.line(format!("{name}[{index}] {op} {e};"));
    }

    fn index(&mut self) -> String {
        let ty = if self.rng.gen_bool(0.5) { U32 } else { Usize };
        self.expr(ty, 2).0
    }

    fn local_array(&mut self) {
        let name = self.name();
        let elem = *ALL.choose(self.rng).unwrap();
        let len = self.rng.gen_range(1..6u64);
        let init = if self.rng.gen_bool(0.5) {
            let (v, _) = self.typed_expr(elem, 2);
            format!("[{v}; {len}]")
        } else {
            let values: Vec<String> = (0..len).map(|_| self.typed_expr(elem, 1).0).collect();
            format!("[{}]", values.join(", "))
        };
        let mutable = self.rng.gen_bool(0.7);
        self.line(format!("let {}{name} = {init};", if mutable { "mut " } else { "" }));
        self.bind(name, Binding::Array { elem, mutable, len: Some(len) });
    }

    fn for_loop(&mut self) {
        let ty = *INTS.choose(self.rng).unwrap();
        let (a, _) = self.typed_expr(ty, 2);
        let (b, _) = self.expr(ty, 2);
        let range = match self.rng.gen_range(0..6) {
            0 => format!("{a}..{b}"),
            1 => format!("{a}..={b}"),
            2 => format!("({a}..{b}).step_by({})", self.rng.gen_range(0..5usize)),
            3 => format!("({a}..{b}).rev()"),
            4 => format!("grid_stride({a}..{b})"),
            _ => format!("block_stride({a}..{b})"),
        };
        let var = if self.rng.gen_bool(0.1) { "_".to_string() } else { self.name() };
        self.loops += 1;
        self.block(format!("for {var} in {range}"), |g| {
            if var != "_" {
                g.bind(var.clone(), Binding::Var { ty, mutable: false });
            }
            g.stmts();
        });
        self.loops -= 1;
    }

    fn invalid_stmt(&mut self) {
        let name = self.name();
        let text = match self.rng.gen_range(0..10) {
            0 => format!("let ({name}, b) = (1, 2);"),
            1 => "println!(\"x\");".into(),
            2 => format!("let {name} = \"text\";"),
            3 => format!("let {name} = |v: u32| v + 1;"),
            4 => format!("let {name}: Vec<u32> = 0;"),
            5 => "fn inner() {}".into(),
            6 => format!("{name};"),
            7 => format!("let {name} = match 1u32 {{ _ => 2u32 }};"),
            8 => "'outer: loop { break 'outer; }".to_owned(),
            _ => format!("let {name} = unknown_function(1u32);"),
        };
        self.line(text);
    }

    /// An expression of `ty` whose type does not depend on inference.
    fn typed_expr(&mut self, ty: Ty, depth: u32) -> (String, bool) {
        let (e, typed) = self.expr(ty, depth);
        if typed {
            (e, true)
        } else {
            (format!("({e} as {})", ty.name()), true)
        }
    }

    /// An expression of type `ty`, and whether its type is fixed without context.
    fn expr(&mut self, ty: Ty, depth: u32) -> (String, bool) {
        self.expr_in(ty, depth, false)
    }

    /// `conditional`: evaluated only under a condition, where collectives are left out.
    fn expr_in(&mut self, ty: Ty, depth: u32, conditional: bool) -> (String, bool) {
        if depth == 0 || self.rng.gen_bool(0.25) {
            return self.leaf(ty);
        }
        if self.rng.gen_bool(0.01) {
            return (self.invalid_expr(), true);
        }
        let d = depth - 1;
        match self.rng.gen_range(0..12) {
            0 | 1 => self.binary(ty, d, conditional),
            2 => {
                let from = *ALL.choose(self.rng).unwrap();
                let (e, _) = self.expr_in(from, d, conditional);
                (format!("({e} as {})", ty.name()), true)
            }
            3 | 4 => self.method(ty, d, conditional),
            5 if ty == Bool => {
                let (a, _) = self.expr_in(Bool, d, conditional);
                let op = if self.rng.gen_bool(0.5) { "&&" } else { "||" };
                let (b, _) = self.expr_in(Bool, d, true);
                (format!("({a} {op} {b})"), true)
            }
            5 | 6 if ty == Bool => {
                let operand = *NUMERIC.choose(self.rng).unwrap();
                let (a, at) = self.expr_in(operand, d, conditional);
                let (b, bt) = self.expr_in(operand, d, conditional);
                let op = ["==", "!=", "<", "<=", ">", ">="].choose(self.rng).unwrap();
                let a = if at || bt { a } else { format!("({a} as {})", operand.name()) };
                (format!("({a} {op} {b})"), true)
            }
            7 => {
                let (c, _) = self.expr_in(Bool, d, conditional);
                let (a, at) = self.expr_in(ty, d, true);
                let (b, bt) = self.expr_in(ty, d, true);
                (format!("(if {c} {{ {a} }} else {{ {b} }})"), at || bt)
            }
            8 if (!conditional || self.rng.gen_bool(0.1)) && ty != Bool => {
                let op = ["shfl", "shfl_up", "shfl_down", "shfl_xor"].choose(self.rng).unwrap();
                let (v, _) = self.typed_expr(ty, d);
                let lane = self.rng.gen_range(0..40u32);
                (format!("{op}({v}, {lane}u32)"), true)
            }
            9 => match self.atomic(Some(ty)) {
                Some(a) => (a, true),
                None => self.leaf(ty),
            },
            10 => match ty {
                Bool => {
                    let (a, _) = self.expr_in(Bool, d, conditional);
                    (format!("(!{a})"), true)
                }
                t if t.is_signed_int() || t.is_float() => {
                    let (a, typed) = self.expr_in(t, d, conditional);
                    (format!("(-{a})"), typed)
                }
                t => {
                    let (a, typed) = self.expr_in(t, d, conditional);
                    (format!("(!{a})"), typed)
                }
            },
            11 if matches!(ty, I32 | U32) => self.fused_int(ty, d, conditional),
            _ => self.leaf(ty),
        }
    }

    /// A fused integer builtin of `ty`, `i32` or `u32` (`max3(…)`, `add_max_relu(…)`, …).
    fn fused_int(&mut self, ty: Ty, d: u32, conditional: bool) -> (String, bool) {
        let mut calls = vec![("max3", 3), ("min3", 3), ("add_max", 3), ("add_min", 3)];
        if ty == I32 {
            calls.extend([
                ("max_relu", 2),
                ("min_relu", 2),
                ("max3_relu", 3),
                ("min3_relu", 3),
                ("add_max_relu", 3),
                ("add_min_relu", 3),
            ]);
        }
        let (name, arity) = *calls.choose(self.rng).unwrap();
        let (first, _) = self.typed_expr(ty, d);
        let rest: Vec<String> = (1..arity).map(|_| self.expr_in(ty, d, conditional).0).collect();
        (format!("{name}({first}, {})", rest.join(", ")), true)
    }

    fn binary(&mut self, ty: Ty, d: u32, conditional: bool) -> (String, bool) {
        let ops: &[&str] = if ty.is_int() {
            &["+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>"]
        } else if ty.is_float() {
            &["+", "-", "*", "/", "%"]
        } else {
            &["&", "|", "^", "==", "!="]
        };
        let op = *ops.choose(self.rng).unwrap();
        let (a, at) = self.expr_in(ty, d, conditional);
        if matches!(op, "<<" | ">>") {
            let amount = *INTS.choose(self.rng).unwrap();
            let (b, _) = self.typed_expr(amount, d);
            return (format!("({a} {op} {b})"), at);
        }
        let (b, bt) = self.expr_in(ty, d, conditional);
        (format!("({a} {op} {b})"), at || bt)
    }

    fn method(&mut self, ty: Ty, d: u32, conditional: bool) -> (String, bool) {
        let candidates = methods_returning(ty);
        let Some((name, recv, args)) = candidates.choose(self.rng).cloned() else { return self.leaf(ty) };
        let (r, _) = self.receiver(recv, d, conditional);
        let args: Vec<String> = args.iter().map(|&a| self.expr_in(a, d, conditional).0).collect();
        if self.rng.gen_bool(0.2) {
            let all: Vec<String> = std::iter::once(r).chain(args).collect();
            return (format!("{}::{name}({})", recv.name(), all.join(", ")), true);
        }
        (format!("{r}.{name}({})", args.join(", ")), true)
    }

    /// A method receiver, typed.
    fn receiver(&mut self, ty: Ty, d: u32, conditional: bool) -> (String, bool) {
        let (e, typed) = self.expr_in(ty, d, conditional);
        let e = if typed { e } else { format!("({e} as {})", ty.name()) };
        (e, true)
    }

    fn atomic(&mut self, ty: Option<Ty>) -> Option<String> {
        let arrays: Vec<(String, Ty)> = self
            .visible()
            .into_iter()
            .filter_map(|(n, b)| match b {
                Binding::Array { elem, mutable: true, len } if len.is_none() || len == Some(32) => Some((n, elem)),
                _ => None,
            })
            .filter(|(_, elem)| ty.is_none_or(|t| t == *elem))
            .collect();
        let (name, elem) = arrays.choose(self.rng).cloned()?;
        let op = ["atomic_add", "atomic_min", "atomic_max", "atomic_exch", "atomic_cas"].choose(self.rng).unwrap();
        let index = self.index();
        let (v, _) = self.expr(elem, 1);
        let args = if *op == "atomic_cas" { format!("{v}, {}", self.expr(elem, 1).0) } else { v };
        Some(format!("{name}.{op}({index}, {args})"))
    }

    fn leaf(&mut self, ty: Ty) -> (String, bool) {
        let visible = self.visible();
        let mut names: Vec<(String, bool)> = Vec::new();
        let mut arrays: Vec<String> = Vec::new();
        for (name, b) in &visible {
            match b {
                Binding::Var { ty: t, .. } | Binding::Const { ty: t } if *t == ty => names.push((name.clone(), true)),
                Binding::Array { elem, .. } if *elem == ty => arrays.push(name.clone()),
                Binding::Array { len: None, .. } if ty == Usize => names.push((format!("{name}.len()"), true)),
                _ => {}
            }
        }
        match self.rng.gen_range(0..6) {
            0 | 1 if !names.is_empty() => names.choose(self.rng).unwrap().clone(),
            2 if !arrays.is_empty() => {
                let array = arrays.choose(self.rng).unwrap().clone();
                let index = self.index();
                (format!("{array}[{index}]"), true)
            }
            3 if ty == U32 => {
                let b = [
                    "thread_idx",
                    "block_idx",
                    "block_dim",
                    "grid_dim",
                    "global_id",
                    "grid_size",
                    "lane_id",
                    "warp_size",
                ]
                .choose(self.rng)
                .unwrap();
                (format!("{b}()"), true)
            }
            _ => {
                let suffixed = ty == Bool || self.rng.gen_bool(0.6);
                let lit = self.literal(ty, suffixed);
                (lit, suffixed)
            }
        }
    }

    /// A literal or constant of `ty`, edge values included.
    fn literal(&mut self, ty: Ty, suffixed: bool) -> String {
        let t = ty.name();
        if ty == Bool {
            return if self.rng.gen_bool(0.5) { "true".into() } else { "false".into() };
        }
        let suffix = if suffixed { t } else { "" };
        if ty.is_float() {
            return match self.rng.gen_range(0..14) {
                0 => format!("{t}::NAN"),
                1 => format!("{t}::INFINITY"),
                2 => format!("{t}::NEG_INFINITY"),
                3 => format!("{t}::MAX"),
                4 => format!("{t}::MIN_POSITIVE"),
                5 => format!("{t}::EPSILON"),
                6 => format!("{t}::consts::PI"),
                7 => format!("-0.0{suffix}"),
                8 => format!("1e-45{suffix}"),
                9 => format!("3.4028235e38{suffix}"),
                10 => format!("-2.5{suffix}"),
                _ => format!("{}.5{suffix}", self.rng.gen_range(0..100)),
            };
        }
        let max: u128 = match ty {
            I8 => i8::MAX as u128,
            U8 => u8::MAX as u128,
            I16 => i16::MAX as u128,
            U16 => u16::MAX as u128,
            I32 => i32::MAX as u128,
            U32 => u32::MAX as u128,
            I64 => i64::MAX as u128,
            _ => u64::MAX as u128,
        };
        match self.rng.gen_range(0..12) {
            0 => format!("{t}::MAX"),
            1 => format!("{t}::MIN"),
            2 => format!("{max}{suffix}"),
            3 if ty.is_signed_int() => format!("-{}{suffix}", max + 1),
            4 if ty.is_signed_int() => format!("-1{suffix}"),
            5 => format!("0{suffix}"),
            6 => format!("0x{:x}{suffix}", self.rng.gen_range(0..=max.min(0xffff))),
            _ => format!("{}{suffix}", self.rng.gen_range(0..=max.min(300))),
        }
    }

    fn invalid_expr(&mut self) -> String {
        let name = self.name();
        match self.rng.gen_range(0..9) {
            0 => format!("{name}.no_such_method()"),
            1 => "\"text\"".into(),
            2 => "(1u32, 2u32)".into(),
            3 => format!("&{name}"),
            4 => format!("*{name}"),
            5 => format!("{name}.0"),
            6 => "Foo::BAR".into(),
            7 => format!("{name}(1u32)"),
            _ => "1u128".into(),
        }
    }
}

/// Methods returning `ty`: name, receiver type and argument types.
fn methods_returning(ty: Ty) -> Vec<(&'static str, Ty, Vec<Ty>)> {
    let mut out = Vec::new();
    if ty.is_float() {
        for m in [
            "sqrt", "abs", "floor", "ceil", "round", "trunc", "exp", "exp2", "ln", "log2", "log10", "sin", "cos",
            "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "cbrt", "recip", "signum",
        ] {
            out.push((m, ty, vec![]));
        }
        for m in ["min", "max", "powf", "atan2", "hypot", "copysign"] {
            out.push((m, ty, vec![ty]));
        }
        out.push(("powi", ty, vec![I32]));
        out.push(("mul_add", ty, vec![ty, ty]));
        out.push(("clamp", ty, vec![ty, ty]));
    }
    if ty == Bool {
        for f in [F32, F64] {
            for m in ["is_nan", "is_finite", "is_infinite", "is_sign_negative"] {
                out.push((m, f, vec![]));
            }
        }
        for i in INTS.iter().copied().filter(|t| !t.is_signed_int()) {
            out.push(("is_power_of_two", i, vec![]));
            out.push(("is_multiple_of", i, vec![i]));
        }
    }
    if ty == U32 {
        out.push(("to_bits", F32, vec![]));
        for i in INTS {
            for m in ["count_ones", "leading_zeros", "trailing_zeros", "ilog2"] {
                out.push((m, i, vec![]));
            }
        }
    }
    if ty == U64 {
        out.push(("to_bits", F64, vec![]));
    }
    if ty.is_int() {
        for m in ["min", "max", "wrapping_add", "wrapping_sub", "wrapping_mul", "wrapping_div", "wrapping_rem"] {
            out.push((m, ty, vec![ty]));
        }
        for m in ["saturating_add", "saturating_sub"] {
            out.push((m, ty, vec![ty]));
        }
        out.push(("clamp", ty, vec![ty, ty]));
        out.push(("wrapping_neg", ty, vec![]));
        for m in ["pow", "wrapping_pow", "wrapping_shl", "wrapping_shr", "rotate_left", "rotate_right"] {
            out.push((m, ty, vec![U32]));
        }
        if ty.is_signed_int() {
            out.push(("abs", ty, vec![]));
            out.push(("wrapping_abs", ty, vec![]));
            out.push(("signum", ty, vec![]));
        } else {
            out.push(("div_ceil", ty, vec![ty]));
            out.push(("next_power_of_two", ty, vec![]));
            for i in INTS.iter().copied().filter(|i| unsigned(*i) == ty) {
                out.push(("abs_diff", i, vec![i]));
            }
        }
    }
    out
}
