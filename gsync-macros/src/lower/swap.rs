//! `std::mem::swap(&mut a, &mut b)`: two slice parameters trade places (a
//! ping-pong loop written once), or two scalar variables trade values.

use super::{Binding, Block, Expr, ExprKind, Lowerer, Place, StmtKind};
use crate::ir::{Array, ArrayId, ArraySpace, VarId};
use crate::names;
use syn::spanned::Spanned;

/// What one argument of a swap names.
enum Operand {
    Slice(ArrayId),
    Var(VarId),
}

impl Lowerer<'_> {
    /// Whether a call is `swap`, `mem::swap`, `std::mem::swap` or `core::mem::swap`.
    pub(super) fn is_swap_call(c: &syn::ExprCall) -> bool {
        let syn::Expr::Path(p) = &*c.func else { return false };
        let segments: Vec<String> = p.path.segments.iter().map(|s| s.ident.to_string()).collect();
        let segments: Vec<&str> = segments.iter().map(String::as_str).collect();
        p.qself.is_none() && matches!(segments.as_slice(), ["swap"] | ["mem", "swap"] | ["std" | "core", "mem", "swap"])
    }

    /// Lowers a swap statement: a [`StmtKind::Swap`] for slices, three
    /// assignments through a hidden variable for scalars.
    pub(super) fn swap(&mut self, c: &syn::ExprCall, out: &mut Block) {
        let span = c.span();
        let [a, b] = match c.args.iter().collect::<Vec<_>>().as_slice() {
            [a, b] => [*a, *b],
            _ => {
                self.diag.error(span, "`swap` takes two places: `std::mem::swap(&mut a, &mut b);`");
                return;
            }
        };
        let (Some((a, a_name)), Some((b, b_name))) = (self.swap_operand(a), self.swap_operand(b)) else { return };
        if a_name == b_name {
            self.diag.error(span, format!("`{a_name}` is borrowed mutably twice: swap two different places"));
            return;
        }
        match (a, b) {
            (Operand::Slice(a), Operand::Slice(b)) => self.swap_slices(a, b, span, out),
            (Operand::Var(a), Operand::Var(b)) => {
                let (ty_a, ty_b) = (self.vars[a.0].ty, self.vars[b.0].ty);
                self.unify(ty_a, ty_b, span);
                let saved = self.hidden_var("swapped", ty_a, span);
                let var = |v: VarId| Expr { kind: ExprKind::Var(v), ty: ty_a, span };
                out.push(Self::stmt_of(StmtKind::Let { var: saved, init: Some(var(a)) }, span));
                for (place, value) in [(a, b), (b, saved)] {
                    let kind = StmtKind::Assign { place: Place::Var(place), op: None, value: var(value) };
                    out.push(Self::stmt_of(kind, span));
                }
            }
            _ => self.diag.error(span, "mismatched types: `swap` exchanges two slices or two scalars, not one of each"),
        }
    }

    fn swap_slices(&mut self, a: ArrayId, b: ArrayId, span: proc_macro2::Span, out: &mut Block) {
        let (x, y) = (&self.arrays[a.0], &self.arrays[b.0]);
        if x.elem != y.elem || x.mutable != y.mutable {
            self.diag.error(
                span,
                format!(
                    "mismatched types: `{}: {}` and `{}: {}`; only slices of the same type can trade places",
                    x.name,
                    slice_type(x),
                    y.name,
                    slice_type(y)
                ),
            );
            return;
        }
        if x.symmetric || y.symmetric {
            let name = if x.symmetric { &x.name } else { &y.name };
            self.diag.error(
                span,
                format!(
                    "`{name}` is #[symmetric]: its part on each PE is fixed for the launch, so it cannot trade places"
                ),
            );
            return;
        }
        out.push(Self::stmt_of(StmtKind::Swap(a, b), span));
    }

    /// `&mut name`, naming a swappable slice parameter or a `mut` scalar.
    fn swap_operand(&mut self, e: &syn::Expr) -> Option<(Operand, String)> {
        let place = match e {
            syn::Expr::Reference(r) if r.mutability.is_some() => &*r.expr,
            _ => {
                self.diag.error(e.span(), "`swap` takes mutable borrows of two variables: `&mut a`");
                return None;
            }
        };
        let ident = match place {
            syn::Expr::Path(p) if p.qself.is_none() => p.path.get_ident(),
            _ => None,
        };
        let Some(ident) = ident else {
            self.diag.error(
                place.span(),
                "`swap` exchanges two variables (slice parameters or scalars); swap elements through a variable",
            );
            return None;
        };
        let name = names::rust_name(ident);
        match self.lookup(&name) {
            Some(Binding::Var(v)) if self.vars[v.0].mutable => Some((Operand::Var(v), name)),
            Some(Binding::Var(_)) => {
                self.diag.error(place.span(), format!("cannot borrow `{name}` as mutable: declare it `mut {name}`"));
                None
            }
            Some(Binding::Array(id)) => {
                self.swappable_slice(id, &name, place.span()).map(|id| (Operand::Slice(id), name))
            }
            Some(Binding::Const { .. }) => {
                self.diag.error(place.span(), format!("cannot borrow the constant `{name}` as mutable"));
                None
            }
            None => {
                self.diag.error(place.span(), format!("cannot find `{name}` in this kernel"));
                None
            }
        }
    }

    /// A slice parameter of the kernel declared `mut name: &[mut] [T]`.
    fn swappable_slice(&mut self, id: ArrayId, name: &str, span: proc_macro2::Span) -> Option<ArrayId> {
        if self.in_device_function() {
            self.diag.error(
                span,
                "slices trade places only in the kernel's own body, where they are its parameters; a device function sees its caller's slices",
            );
            return None;
        }
        let info = &self.arrays[id.0];
        if info.space != ArraySpace::Global {
            self.diag.error(
                span,
                format!("`{name}` is an array of fixed place: only slice parameters of the kernel can be swapped"),
            );
            return None;
        }
        if !self.rebindable.contains(&id) {
            self.diag.error(
                span,
                format!("cannot borrow `{name}` as mutable: declare the parameter `mut {name}: {}`", slice_type(info)),
            );
            return None;
        }
        Some(id)
    }
}

/// How a slice parameter's type is written.
fn slice_type(info: &Array) -> String {
    format!("&{}[{}]", if info.mutable { "mut " } else { "" }, info.elem.name())
}
