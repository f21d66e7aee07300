//! Constant expressions: `const` items (in a kernel, a device function or
//! their module) and array lengths. They are evaluated the way rustc
//! evaluates them, and an evaluation rustc rejects (overflow, division by
//! zero, an over-wide shift) is an error here too.

use std::rc::Rc;

use super::{Expr, ExprKind, Lowerer, ModuleItems};
use crate::diagnostics::Diagnostics;
use crate::ir::consts::{binary, cast, in_range, round_to, unary};
use crate::ir::{BlockConst, BlockConstKind, Builtin, ConstTable, ConstValue, MathFn, Scalar, UsedBlockConst};
use crate::parse::Substitution;
use proc_macro2::Span;
use syn::spanned::Spanned;

/// The length of a shared or local array.
pub(super) enum Length {
    /// Known at expansion.
    Fixed(u64),
    /// Computed from `BLOCK_SIZE`.
    PerBlock(Rc<BlockConst>),
}

impl Length {
    /// The length, if it is known at expansion.
    pub(super) fn fixed(&self) -> Option<u64> {
        match self {
            Length::Fixed(n) => Some(*n),
            Length::PerBlock(_) => None,
        }
    }

    /// The length's expression in `BLOCK_SIZE`, if it has one.
    pub(super) fn per_block(&self) -> Option<Rc<BlockConst>> {
        match self {
            Length::Fixed(_) => None,
            Length::PerBlock(tree) => Some(tree.clone()),
        }
    }
}

/// Why an expression has no constant value.
enum NotConst {
    /// It reads something only known at run time.
    Runtime(Span),
    /// Its evaluation fails, as rustc's would.
    Fails(Span, String),
}

impl Lowerer<'_> {
    /// The value of a lowered expression whose type is settled, or an error.
    pub(super) fn fold(&mut self, e: &Expr) -> Option<ConstValue> {
        match self.fold_inner(e) {
            Ok(v) => Some(v),
            Err(NotConst::Runtime(span)) => {
                self.diag.error(
                    span,
                    "not a constant: a `const` or an array length takes literals, other constants, arithmetic and `as` casts",
                );
                None
            }
            Err(NotConst::Fails(span, message)) => {
                self.diag.error(span, message);
                None
            }
        }
    }

    /// The type of a constant's sub-expression, with rustc's fallback.
    fn const_type(&self, e: &Expr) -> Scalar {
        match self.inferred(e.ty) {
            super::Inferred::Known(s) => s,
            super::Inferred::AnyInt => Scalar::I32,
            super::Inferred::AnyFloat => Scalar::F64,
        }
    }

    fn fold_inner(&self, e: &Expr) -> Result<ConstValue, NotConst> {
        crate::stack::deep(|| self.fold_node(e))
    }

    fn fold_node(&self, e: &Expr) -> Result<ConstValue, NotConst> {
        let ty = self.const_type(e);
        let overflow = || NotConst::Fails(e.span, format!("this constant overflows `{}`", ty.name()));
        let per_block = |kind| Ok(ConstValue::Block(Rc::new(BlockConst { kind, ty })));
        match &e.kind {
            ExprKind::Int(v) if ty.is_float() => Ok(ConstValue::Float(*v as f64)),
            ExprKind::Int(v) => in_range(*v, ty).map(ConstValue::Int).ok_or_else(overflow),
            ExprKind::Float(v) => Ok(ConstValue::Float(round_to(*v, ty))),
            ExprKind::Bool(b) => Ok(ConstValue::Bool(*b)),
            ExprKind::Builtin(Builtin::BlockSize) => Ok(ConstValue::Block(BlockConst::block_size())),
            ExprKind::Unary(op, a) => match self.fold_inner(a)? {
                ConstValue::Block(a) => per_block(BlockConstKind::Unary(*op, a)),
                a => unary(*op, a, ty).map_err(|m| NotConst::Fails(e.span, m)),
            },
            // `f16::from_f32_const(0.5)`: rounded as the `half` crate rounds it.
            ExprKind::Call { func: MathFn::FromF32, args } if ty.is_half() && args.len() == 1 => {
                match self.fold_inner(&args[0])? {
                    ConstValue::Float(v) => Ok(ConstValue::Float(super::half_precision::round_from_f32(v as f32, ty))),
                    _ => Err(NotConst::Runtime(e.span)),
                }
            }
            // Half precision arithmetic is not `const` in Rust.
            ExprKind::Binary(_, a, _) if self.const_type(a).is_half() => Err(NotConst::Runtime(e.span)),
            ExprKind::Binary(op, a, b) => {
                let operand = self.const_type(a);
                let (x, y) = (self.fold_inner(a)?, self.fold_inner(b)?);
                if matches!(x, ConstValue::Block(_)) || matches!(y, ConstValue::Block(_)) {
                    let (x, y) = (tree(x, operand), tree(y, self.const_type(b)));
                    return per_block(BlockConstKind::Binary(*op, x, y));
                }
                binary(*op, x, y, operand).map_err(|m| NotConst::Fails(e.span, m))
            }
            ExprKind::Cast(a) => match self.fold_inner(a)? {
                ConstValue::Block(a) => per_block(BlockConstKind::Cast(a)),
                a => Ok(cast(a, ty)),
            },
            _ => Err(NotConst::Runtime(e.span)),
        }
    }

    /// An array length: a positive integer constant, or one computed from `BLOCK_SIZE`
    /// (`array` names the array in messages).
    pub(super) fn const_length(&mut self, e: &syn::Expr, array: &str) -> Option<Length> {
        let lowered = self.expr(e)?;
        if let super::Inferred::AnyInt = self.inferred(lowered.ty) {
            self.require(lowered.ty, Scalar::Usize, lowered.span, "an array length");
        }
        match self.fold_inner(&lowered) {
            Ok(ConstValue::Int(n)) if n > 0 && n <= u64::MAX as i128 => Some(Length::Fixed(n as u64)),
            Ok(ConstValue::Block(value)) if value.ty.is_int() => {
                let what = format!("the length of `{array}`");
                let span = lowered.span;
                self.block_consts.push(UsedBlockConst { what, value: value.clone(), length: true, span });
                Some(Length::PerBlock(value))
            }
            Err(NotConst::Fails(span, message)) => {
                self.diag.error(span, message);
                None
            }
            _ => {
                self.diag.error(e.span(), "an array length must be a positive integer literal or `const`");
                None
            }
        }
    }

    /// Records a use of constant `name` whose value is computed from `BLOCK_SIZE`, so that
    /// the block sizes for which it fails are refused.
    pub(super) fn use_block_const(&mut self, name: &str, value: &Rc<BlockConst>, span: Span) {
        let what = format!("`const {name}`");
        if !self.block_consts.iter().any(|c| c.what == what) {
            self.block_consts.push(UsedBlockConst { what, value: value.clone(), length: false, span });
        }
    }

    /// `const NAME: T = value;`, bound in the current scope.
    pub(super) fn const_item(&mut self, c: &syn::ItemConst) {
        // A constant in error is still bound, so that its uses raise no further errors.
        let (name, value, ty) = match self.const_value(c) {
            Some(v) => v,
            None => placeholder(c, self.scalar_type(&c.ty)),
        };
        self.bind(name, super::Binding::Const { value, ty }, proc_macro2::Span::call_site());
    }

    fn const_value(&mut self, c: &syn::ItemConst) -> Option<(String, ConstValue, Scalar)> {
        let Some(ty) = self.scalar_type(&c.ty) else {
            self.diag.error(c.ty.span(), "a kernel `const` must have a primitive type");
            return None;
        };
        let e = self.expr(&c.expr)?;
        self.require(e.ty, ty, e.span, "the constant's value");
        let value = self.fold(&e)?;
        Some((crate::names::rust_name(&c.ident), value, ty))
    }
}

/// Evaluates the `const` items of a `#[gsync::kernels]` module, which may name
/// each other in any order (as in Rust).
pub fn module_consts(items: &[&syn::ItemConst], diag: &mut Diagnostics) -> Vec<(String, ConstValue, Scalar)> {
    let mut known = ModuleItems::default();
    let mut left: Vec<&syn::ItemConst> = items.to_vec();
    loop {
        let before = left.len();
        left.retain(|c| {
            let mut scratch = Diagnostics::default();
            match evaluate(c, &known, &mut scratch) {
                Some(value) if !scratch.has_errors() => {
                    known.consts.push(value);
                    false
                }
                _ => true,
            }
        });
        if left.len() == before {
            break;
        }
    }
    // What is left fails in any order: report it, and bind it anyway so
    // that kernels using it raise no further errors.
    for c in left {
        evaluate(c, &known, diag);
        known.consts.push(placeholder(c, crate::parse::scalar_type(&c.ty)));
    }
    known.consts
}

fn evaluate(c: &syn::ItemConst, known: &ModuleItems, diag: &mut Diagnostics) -> Option<(String, ConstValue, Scalar)> {
    let subst = Substitution::default();
    let mut l = Lowerer::new(known, &subst, diag);
    let value = l.const_value(c);
    if l.diag.has_errors() {
        None
    } else {
        value
    }
}

/// Whether a `const` item's type is an array, which makes it a [`ConstTable`].
pub fn is_table(c: &syn::ItemConst) -> bool {
    matches!(&*c.ty, syn::Type::Array(_))
}

/// Evaluates a module's lookup tables, whose elements may name the module's scalar
/// constants (`known`).
pub fn module_tables(items: &[&syn::ItemConst], known: &ModuleItems, diag: &mut Diagnostics) -> Vec<ConstTable> {
    items
        .iter()
        .filter_map(|c| {
            let subst = Substitution::default();
            let mut l = Lowerer::new(known, &subst, diag);
            // A table in error is still bound, of its declared type and length where it has
            // them, so that its uses raise no further errors.
            l.table(c).or_else(|| placeholder_table(c))
        })
        .collect()
}

impl Lowerer<'_> {
    fn table(&mut self, c: &syn::ItemConst) -> Option<ConstTable> {
        let syn::Type::Array(array) = &*c.ty else { return None };
        let name = crate::names::rust_name(&c.ident);
        let Some(elem) = self.scalar_type(&array.elem) else {
            self.diag.error(array.elem.span(), "a `const` table holds a primitive type: `[u32; N]`, `[f32; N]`, …");
            return None;
        };
        let Some(len) = self.const_length(&array.len, &name)?.fixed() else {
            self.diag.error(array.len.span(), "a `const` table's length cannot depend on `BLOCK_SIZE`");
            return None;
        };
        let elements: Vec<&syn::Expr> = match &*c.expr {
            syn::Expr::Array(list) => list.elems.iter().collect(),
            syn::Expr::Repeat(r) => {
                let count = self.const_length(&r.len, &name)?.fixed().unwrap_or(0);
                vec![&*r.expr; count.min(len + 1) as usize]
            }
            other => {
                self.diag.error(other.span(), "a `const` table's value is a list `[a, b, …]` or `[v; N]`");
                return None;
            }
        };
        if elements.len() as u64 != len {
            self.diag.error(
                c.expr.span(),
                format!("mismatched types: `[{}; {len}]` holds {len} elements, found {}", elem.name(), elements.len()),
            );
            return None;
        }
        let mut values = Vec::with_capacity(elements.len());
        for e in elements {
            let value = self.expr(e)?;
            self.require(value.ty, elem, value.span, "an element of the table");
            match self.fold(&value)? {
                ConstValue::Block(_) => {
                    self.diag.error(e.span(), "a `const` table's elements cannot depend on `BLOCK_SIZE`");
                    return None;
                }
                v => values.push(v),
            }
        }
        Some(ConstTable { name, elem, values, span: c.ident.span() })
    }
}

/// A stand-in for a table in error: its declared element type and literal length.
fn placeholder_table(c: &syn::ItemConst) -> Option<ConstTable> {
    let syn::Type::Array(array) = &*c.ty else { return None };
    let elem = crate::parse::scalar_type(&array.elem)?;
    let syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(len), .. }) = &array.len else { return None };
    let len: usize = len.base10_parse().ok().filter(|n| (1..=1 << 16).contains(n))?;
    let (_, value, _) = placeholder(c, Some(elem));
    Some(ConstTable { name: crate::names::rust_name(&c.ident), elem, values: vec![value; len], span: c.ident.span() })
}

/// A stand-in for a constant in error, of its declared type.
fn placeholder(c: &syn::ItemConst, ty: Option<Scalar>) -> (String, ConstValue, Scalar) {
    let ty = ty.unwrap_or(Scalar::I32);
    let value = match ty {
        Scalar::Bool => ConstValue::Bool(false),
        t if t.is_float() => ConstValue::Float(1.0),
        _ => ConstValue::Int(1),
    };
    (crate::names::rust_name(&c.ident), value, ty)
}

/// A constant as a node of a tree computed from `BLOCK_SIZE`.
fn tree(value: ConstValue, ty: Scalar) -> Rc<BlockConst> {
    match value {
        ConstValue::Block(tree) => tree,
        value => Rc::new(BlockConst { kind: BlockConstKind::Value(value), ty }),
    }
}
