//! Stage 2: the function body to the typed IR.
//!
//! Lowering resolves names, infers types (see [`types`]) and rejects syntax
//! the DSL does not have, each with an error on its span. Type-class rules
//! that need the final types (signedness, literal ranges) and the uniformity
//! analysis run afterwards, in `crate::check`.

mod assert;
mod call;
mod chunks;
mod communication;
pub mod consts;
mod expr;
mod fused_int;
mod half_precision;
pub use half_precision::cast_error as half_cast_error;
mod matching;
mod method_sig;
mod methods;
mod range_put;
mod resolve;
mod stmt;
mod swap;
pub mod types;

use crate::diagnostics::{line_of, Diagnostics};
use crate::ir::{self, *};
use crate::names;
use crate::parse::{DeviceFn, ParamKind, Signature, Substitution};
use proc_macro2::Span;
use std::collections::{HashMap, HashSet};
use types::{Inferred, TyId, TypeTable};

// The IR while lowering builds it: typed by inference variables, which
// `resolve` replaces with scalars once inference is done.
type ArrayInit = ir::ArrayInit<TyId>;
type Block = ir::Block<TyId>;
type Expr = ir::Expr<TyId>;
type ExprKind = ir::ExprKind<TyId>;
type ForRange = ir::ForRange<TyId>;
type Place = ir::Place<TyId>;
type Stmt = ir::Stmt<TyId>;
type StmtKind = ir::StmtKind<TyId>;
type Var = ir::Var<TyId>;

pub use call::is_reserved as is_reserved_name;

/// What a name in scope stands for.
#[derive(Clone)]
enum Binding {
    Var(VarId),
    Array(ArrayId),
    /// A `const` item: folded into its uses.
    Const {
        value: ConstValue,
        ty: Scalar,
    },
}

struct LoopFrame {
    id: LoopId,
}

/// What a kernel sees besides its own body: the `#[device]` functions and
/// the `const`s of its `#[gsync::kernels]` module (empty for a kernel of its own).
#[derive(Default)]
pub struct ModuleItems {
    pub functions: Vec<DeviceFn>,
    /// Module-level constants, already evaluated.
    pub consts: Vec<(String, ConstValue, Scalar)>,
    /// Module-level lookup tables (`const T: [u32; N] = […]`), already evaluated.
    pub tables: Vec<ConstTable>,
}

impl ModuleItems {
    fn function(&self, name: &str) -> Option<&DeviceFn> {
        self.functions.iter().find(|f| f.ident == name)
    }
}

/// A device function being inlined: where its `return`s go.
struct FnFrame {
    call: CallId,
    name: String,
    /// The variable that receives the result, and its type.
    result: Option<(VarId, TyId)>,
    /// The arrays the function takes as `&[T]` parameters, by parameter name: read-only
    /// here even where the caller's array is mutable, as in Rust.
    read_only: Vec<(ArrayId, String)>,
}

/// Lowering state for one kernel.
pub struct Lowerer<'d> {
    diag: &'d mut Diagnostics,
    items: &'d ModuleItems,
    /// The element types of the type parameters in scope: the kernel's, then
    /// one per device function being inlined.
    generics: Vec<Substitution>,
    /// Statements an expression needs run before the statement that holds it:
    /// the inlined bodies of the device functions it calls.
    pending: Block,
    calls: Vec<InlinedCall>,
    /// Set once the kernel has inlined [`call::MAX_INLINED_CALLS`] calls and said so.
    inlining_exceeded: bool,
    fn_frames: Vec<FnFrame>,
    /// Set while lowering a call that is a whole statement, the only place a
    /// call may pass `&mut` slices.
    statement_call: bool,
    types: TypeTable,
    vars: Vec<Var>,
    arrays: Vec<Array>,
    scopes: Vec<HashMap<String, Binding>>,
    /// The [`UniqueName::spelling`]s taken so far.
    spellings: HashSet<String>,
    loops: Vec<LoopFrame>,
    loop_count: usize,
    grid_syncs: u32,
    /// Nesting depth of blocks inside the kernel body (1 = top level).
    depth: usize,
    /// Element types of local arrays, known only once inference is done.
    local_elem_types: Vec<(ArrayId, TyId)>,
    /// `assert!`s lowered so far, which numbers the next.
    assertions: u32,
    /// Slice parameters declared `mut name: &[T]`, which `swap` may exchange.
    rebindable: HashSet<ArrayId>,
    /// The `shared_slice::<T>(len)` declarations so far.
    shared_slices: Vec<ir::SharedSliceDecl<TyId>>,
    /// The constants sized by `BLOCK_SIZE` the kernel uses, checked at every block size.
    block_consts: Vec<UsedBlockConst>,
    /// The module's lookup tables, by name: a thread's own read-only arrays, declared at
    /// the kernel's start where it reads them.
    tables: Vec<(String, ArrayId)>,
}

/// Lowers a whole kernel. Returns `None` if lowering found errors.
pub fn kernel(
    sig: &Signature,
    body: &syn::Block,
    default_threads: u32,
    items: &ModuleItems,
    generics: &Substitution,
    diag: &mut Diagnostics,
) -> Option<Kernel> {
    let mut l = Lowerer::new(items, generics, diag);
    let params = sig.params.iter().map(|p| l.param(p)).collect();
    let mut body = l.block_in_scope(&body.stmts);
    if l.diag.has_errors() {
        return None;
    }
    l.declare_tables(&mut body);
    let types = l.types.finish();
    let mut arrays = l.arrays;
    for (array, ty) in l.local_elem_types {
        arrays[array.0].elem = types[ty.0];
    }
    let resolver = resolve::Resolver { types: &types };
    let kernel = Kernel {
        name: names::rust_name(&sig.name),
        params,
        vars: l.vars.into_iter().map(|v| resolver.var(v)).collect(),
        arrays,
        body: resolver.block(body),
        grid_syncs: l.grid_syncs,
        loops: l.loop_count,
        default_threads,
        blocks_per_sm: 0,
        calls: l.calls,
        shared_slices: l
            .shared_slices
            .into_iter()
            .map(|d| SharedSliceDecl { array: d.array, len: resolver.expr(d.len), line: d.line })
            .collect(),
        block_consts: l.block_consts,
    };
    Some(kernel)
}

/// The scope every kernel and device function starts from: the module's constants and tables.
fn module_scope(items: &ModuleItems, tables: &[(String, ArrayId)]) -> HashMap<String, Binding> {
    let consts =
        items.consts.iter().map(|(name, value, ty)| (name.clone(), Binding::Const { value: value.clone(), ty: *ty }));
    let tables = tables.iter().map(|(name, array)| (name.clone(), Binding::Array(*array)));
    consts.chain(tables).collect()
}

impl<'d> Lowerer<'d> {
    /// A lowerer at the start of a kernel: only the module's constants in scope.
    fn new(items: &'d ModuleItems, generics: &Substitution, diag: &'d mut Diagnostics) -> Lowerer<'d> {
        let mut l = Lowerer {
            diag,
            items,
            generics: vec![generics.clone()],
            pending: Vec::new(),
            calls: Vec::new(),
            inlining_exceeded: false,
            fn_frames: Vec::new(),
            statement_call: false,
            types: TypeTable::default(),
            vars: Vec::new(),
            arrays: Vec::new(),
            scopes: Vec::new(),
            spellings: HashSet::new(),
            loops: Vec::new(),
            loop_count: 0,
            grid_syncs: 0,
            depth: 0,
            local_elem_types: Vec::new(),
            assertions: 0,
            rebindable: HashSet::new(),
            shared_slices: Vec::new(),
            block_consts: Vec::new(),
            tables: Vec::new(),
        };
        for table in &items.tables {
            let unique = l.fresh_name(&table.name);
            let array = l.new_array(Array {
                name: table.name.clone(),
                unique,
                elem: table.elem,
                space: ArraySpace::Local,
                len: Some(table.values.len() as u64),
                block_len: None,
                mutable: false,
                symmetric: false,
                span: table.span,
            });
            l.tables.push((table.name.clone(), array));
        }
        l.scopes = vec![l.module_scope(), HashMap::new()];
        l
    }

    /// The scope every kernel and device function starts from.
    fn module_scope(&self) -> HashMap<String, Binding> {
        module_scope(self.items, &self.tables)
    }

    /// Declares, at the start of `body`, each lookup table that the kernel reads.
    fn declare_tables(&mut self, body: &mut Block) {
        let mut used = HashSet::new();
        crate::ir_walk::each_stmt(body, &mut |s| {
            for e in crate::ir_walk::stmt_exprs(s) {
                crate::ir_walk::each_expr(e, &mut |x| {
                    if let ExprKind::Load { array, .. } = x.kind {
                        used.insert(array);
                    }
                });
            }
        });
        let mut declarations = Vec::new();
        for (table, (_, array)) in self.items.tables.iter().zip(self.tables.clone()) {
            if !used.contains(&array) {
                continue;
            }
            let values = table.values.iter().map(|v| self.const_expr(v.clone(), table.elem, table.span)).collect();
            declarations.push(Self::stmt_of(StmtKind::LetArray { array, init: ArrayInit::List(values) }, table.span));
        }
        declarations.append(body);
        *body = declarations;
    }
}

impl Lowerer<'_> {
    /// The unique name of a Rust name declared in the kernel.
    fn fresh_name(&mut self, rust: &str) -> UniqueName {
        let mut candidate = UniqueName { base: rust.to_owned(), ordinal: 1 };
        while !self.spellings.insert(candidate.spelling()) {
            candidate.ordinal += 1;
        }
        candidate
    }

    fn param(&mut self, p: &crate::parse::ParamDecl) -> Param {
        let name = names::rust_name(&p.name);
        let unique = self.fresh_name(&name);
        match p.kind {
            ParamKind::Slice { elem, mutable, symmetric } => {
                let id = self.new_array(Array {
                    name: name.clone(),
                    unique,
                    elem,
                    space: ArraySpace::Global,
                    len: None,
                    block_len: None,
                    mutable,
                    symmetric,
                    span: p.span,
                });
                self.bind(name, Binding::Array(id), p.name.span());
                if p.mutable_binding {
                    self.rebindable.insert(id);
                }
                Param::Slice(id)
            }
            ParamKind::Scalar(s) => {
                let ty = self.types.known(s);
                let id = self.new_var(Var {
                    name: name.clone(),
                    unique,
                    ty,
                    mutable: p.mutable_binding,
                    is_param: true,
                    span: p.span,
                });
                self.bind(name, Binding::Var(id), p.name.span());
                Param::Scalar(id)
            }
        }
    }

    fn new_var(&mut self, v: Var) -> VarId {
        self.vars.push(v);
        VarId(self.vars.len() - 1)
    }

    fn new_array(&mut self, a: Array) -> ArrayId {
        self.arrays.push(a);
        ArrayId(self.arrays.len() - 1)
    }

    /// Declares a local variable in the innermost scope.
    fn declare_var(&mut self, ident: &syn::Ident, ty: TyId, mutable: bool) -> VarId {
        let name = names::rust_name(ident);
        let unique = self.fresh_name(&name);
        let id = self.new_var(Var { name: name.clone(), unique, ty, mutable, is_param: false, span: ident.span() });
        self.bind(name, Binding::Var(id), ident.span());
        id
    }

    /// Binds `name` in the innermost scope. A variable or array may not take the name of a
    /// constant in scope: rustc reads such a name as the constant, a pattern that can fail.
    fn bind(&mut self, name: String, b: Binding, span: Span) {
        let constant = match self.lookup(&name) {
            Some(Binding::Const { .. }) => true,
            Some(Binding::Array(array)) => self.tables.iter().any(|(_, table)| *table == array),
            _ => false,
        };
        if !matches!(b, Binding::Const { .. }) && constant {
            self.diag.error(
                span,
                format!("`{name}` cannot shadow the constant `{name}`: rustc reads the name as the constant's value, a pattern that may not match; rename it"),
            );
        }
        self.scopes.last_mut().expect("a scope is always open").insert(name, b);
    }

    fn lookup(&self, name: &str) -> Option<Binding> {
        self.scopes.iter().rev().find_map(|s| s.get(name).cloned())
    }

    fn block_in_scope(&mut self, stmts: &[syn::Stmt]) -> Block {
        self.scopes.push(HashMap::new());
        self.depth += 1;
        let block = self.stmts(stmts);
        self.depth -= 1;
        self.scopes.pop();
        block
    }

    fn unify(&mut self, a: TyId, b: TyId, span: Span) {
        if let Err((x, y)) = self.types.unify(a, b) {
            let message = match (x, y) {
                (Inferred::Known(h), Inferred::AnyFloat) | (Inferred::AnyFloat, Inferred::Known(h)) if h.is_half() => {
                    half_precision::literal_error(h)
                }
                _ => format!("mismatched types: {} and {}", x.describe(), y.describe()),
            };
            self.diag.error(span, message);
        }
    }

    fn require(&mut self, id: TyId, s: Scalar, span: Span, what: &str) {
        if let Err((found, _)) = self.types.require(id, s) {
            if s.is_half() && found == Inferred::AnyFloat {
                self.diag.error(span, half_precision::literal_error(s));
                return;
            }
            self.diag.error(span, format!("{what} must be `{}`, found {}", s.name(), found.describe()));
        }
    }

    /// A primitive type written as a bare path, or a type parameter in scope.
    fn scalar_type(&self, ty: &syn::Type) -> Option<Scalar> {
        self.generics.last().expect("the kernel's substitution is always there").scalar_type(ty)
    }

    /// A primitive type by name, or a type parameter in scope.
    fn type_named(&self, name: &str) -> Option<Scalar> {
        let subst = self.generics.last().expect("the kernel's substitution is always there");
        subst.get(name).or_else(|| Scalar::from_name(name))
    }

    fn inferred(&self, id: TyId) -> Inferred {
        self.types.get(id)
    }

    fn expr_of(&mut self, kind: ExprKind, ty: TyId, span: Span) -> Expr {
        Expr { kind, ty, span }
    }

    fn stmt_of(kind: StmtKind, span: Span) -> Stmt {
        Stmt { kind, span }
    }

    fn line(span: Span) -> u32 {
        line_of(span)
    }

    /// The element type of an array as an inference type.
    fn array_elem_ty(&mut self, array: ArrayId) -> TyId {
        match self.local_elem_types.iter().find(|(a, _)| *a == array) {
            Some((_, ty)) => *ty,
            None => self.types.known(self.arrays[array.0].elem),
        }
    }

    /// Refuses a write to `array` (`what`: "an element assignment", "an atomic", …) at `span`
    /// where the device function being lowered takes it as a `&[T]` parameter; true if it did.
    fn refuse_write_to_read_only(&mut self, array: ArrayId, what: &str, span: Span) -> bool {
        let Some(frame) = self.fn_frames.last() else { return false };
        let Some((_, param)) = frame.read_only.iter().find(|(a, _)| *a == array) else { return false };
        let (function, param) = (frame.name.clone(), param.clone());
        let elem_ty = self.array_elem_ty(array);
        let elem = match self.inferred(elem_ty) {
            Inferred::Known(s) => s.name(),
            _ => "_",
        };
        let message = format!(
            "{what} writes through `{param}`, which `{function}` takes as `&[{elem}]`: take it as `{param}: &mut [{elem}]`"
        );
        self.diag.error(span, message);
        true
    }

    fn new_loop(&mut self) -> LoopId {
        self.loop_count += 1;
        LoopId(self.loop_count - 1)
    }
}
