//! Chunks: `let v = a.load_chunk::<N>(c);` and `a.store_chunk(c, v);` move the `N`
//! consecutive elements of an array from `c · N` (`N` a power of two) into or out of a
//! thread's own array; on a GPU, for slices and shared arrays, in accesses of up to 16 bytes.

use super::consts::Length;
use super::types::{Inferred, TyId};
use super::{Binding, Block, Expr, ExprKind, Lowerer, Place, StmtKind};
use crate::ir::{ArrayId, ArrayInit, ArraySpace, BinOp, Chunk, Scalar};
use crate::names;
use proc_macro2::Span;
use syn::spanned::Spanned;

/// The most bytes one chunk moves: 16 vector accesses of 16 bytes.
const MAX_CHUNK_BYTES: u64 = 256;

/// The fewest bytes an async copy moves: `cp.async` copies 4, 8 or 16.
const MIN_ASYNC_COPY_BYTES: u64 = 4;

impl Lowerer<'_> {
    /// `let v = a.load_chunk::<N>(c);` (or `let v: [T; N] = a.load_chunk(c);`). Where it
    /// fails, `v` is still declared, so that its uses raise no further errors.
    pub(super) fn let_chunk(
        &mut self,
        ident: &syn::Ident,
        mutable: bool,
        annotated: Option<&syn::Type>,
        m: &syn::ExprMethodCall,
        out: &mut Block,
    ) {
        if !self.try_let_chunk(ident, mutable, annotated, m, out) {
            let elem = match annotated {
                Some(syn::Type::Array(a)) => self.scalar_type(&a.elem),
                _ => None,
            };
            let elem = elem.or_else(|| self.method_receiver_array(m).map(|a| self.arrays[a.0].elem));
            let elem = elem.unwrap_or(Scalar::U32);
            self.declare_array(ident, elem, ArraySpace::Local, Some(&Length::Fixed(1)), mutable);
        }
    }

    fn try_let_chunk(
        &mut self,
        ident: &syn::Ident,
        mutable: bool,
        annotated: Option<&syn::Type>,
        m: &syn::ExprMethodCall,
        out: &mut Block,
    ) -> bool {
        let span = m.method.span();
        let Some(array) = self.chunk_receiver(m, false) else { return false };
        let (elem_ty, elem) = self.chunk_elem(array);
        let annotated = match annotated {
            Some(syn::Type::Array(a)) => {
                if let Some(s) = self.scalar_type(&a.elem) {
                    if self.inferred(elem_ty) == Inferred::AnyInt {
                        self.require(elem_ty, s, a.elem.span(), "the chunk's element");
                    } else if s != elem {
                        self.diag.error(
                            a.elem.span(),
                            format!(
                                "mismatched types: `{}` holds `{}`, so its chunks are `[{}; N]`",
                                self.arrays[array.0].name,
                                elem.name(),
                                elem.name()
                            ),
                        );
                        return false;
                    }
                }
                let Some(n) = self.chunk_length(&a.len, &names::rust_name(ident)) else { return false };
                Some((n, a.len.span()))
            }
            Some(other) => {
                self.diag
                    .error(other.span(), "`load_chunk` gives an array: annotate it as `[T; N]` or leave the type out");
                return false;
            }
            None => None,
        };
        let named = match self.chunk_turbofish(m, &names::rust_name(ident)) {
            Ok(n) => n,
            Err(()) => return false,
        };
        let n = match (named, annotated) {
            (Some((a, _)), Some((b, at))) if a != b => {
                self.diag.error(at, format!("`load_chunk::<{a}>` gives `[_; {a}]`, not `[_; {b}]`"));
                return false;
            }
            (Some((n, at)), _) | (None, Some((n, at))) => {
                if !self.chunk_length_fits(n, elem, at) {
                    return false;
                }
                n
            }
            (None, None) => {
                self.diag.error(span, "say how many elements the chunk has: `a.load_chunk::<4>(c)`");
                return false;
            }
        };
        let [index] = m.args.iter().collect::<Vec<_>>()[..] else {
            self.diag.error(span, "`load_chunk::<N>(c)` takes 1 argument, the chunk's index");
            return false;
        };
        let Some(chunk) = self.chunk_index(array, index, n, span, out) else { return false };
        let loads = (0..n)
            .map(|j| {
                let index = self.chunk_element(chunk, j, span);
                self.expr_of(ExprKind::Load { array, index: Box::new(index), line: chunk.line }, elem_ty, span)
            })
            .collect();
        self.local_array(ident, mutable, Length::Fixed(n), ArrayInit::Chunk { chunk, loads }, m.span(), out);
        true
    }

    /// `a.store_chunk(c, v);` (or `a.store_chunk::<N>(c, v);`), `v` being a thread's array.
    pub(super) fn store_chunk(&mut self, m: &syn::ExprMethodCall, out: &mut Block) {
        let span = m.method.span();
        let Some(array) = self.chunk_receiver(m, true) else { return };
        let [index, values] = m.args.iter().collect::<Vec<_>>()[..] else {
            self.diag.error(
                span,
                "`store_chunk(c, v)` takes 2 arguments: the chunk's index and the thread's array to store",
            );
            return;
        };
        let ident = match values {
            syn::Expr::Path(p) => p.path.get_ident().cloned(),
            _ => None,
        };
        let from = match self.named_array(values, ArraySpace::Local) {
            Some(a) => a,
            None => {
                self.diag.error(
                    values.span(),
                    "`store_chunk` stores a thread's own array: name one, e.g. `let v = [a, b, c, d];` then `out.store_chunk(c, v);`",
                );
                return;
            }
        };
        let Some(n) = self.arrays[from.0].len else {
            self.diag.error(values.span(), "a chunk's length must be known without the block size");
            return;
        };
        let Some(ident) = ident else { return };
        let at = match self.chunk_turbofish(m, &names::rust_name(&ident)) {
            Ok(Some((named, at))) if named != n => {
                self.diag.error(at, format!("`store_chunk::<{named}>` stores {named} elements, but `{ident}` has {n}"));
                return;
            }
            Ok(Some((_, at))) => at,
            Ok(None) => values.span(),
            Err(()) => return,
        };
        let (elem_ty, elem) = self.chunk_elem(array);
        if !self.chunk_length_fits(n, elem, at) {
            return;
        }
        let from_ty = self.array_elem_ty(from);
        match self.inferred(elem_ty) {
            Inferred::Known(elem) => {
                let what = format!("the elements stored into `{}`", self.arrays[array.0].name);
                self.require(from_ty, elem, values.span(), &what);
            }
            _ => self.unify(elem_ty, from_ty, values.span()),
        }
        let Some(chunk) = self.chunk_index(array, index, n, m.span(), out) else { return };
        let stores = (0..n)
            .map(|j| {
                let usize_ty = self.types.known(Scalar::Usize);
                let at = self.expr_of(ExprKind::Int(i128::from(j)), usize_ty, span);
                let value =
                    self.expr_of(ExprKind::Load { array: from, index: Box::new(at), line: chunk.line }, from_ty, span);
                let index = self.chunk_element(chunk, j, span);
                let place = Place::Elem { array, index: Box::new(index), line: chunk.line };
                Self::stmt_of(StmtKind::Assign { place, op: None, value }, span)
            })
            .collect();
        out.push(Self::stmt_of(StmtKind::StoreChunk { chunk, from, stores }, span));
    }

    /// `a.copy_chunk_async::<N>(c, source, s);`: chunk `s` of the global slice `source` into
    /// chunk `c` of the shared array `a`, asynchronously (see [`StmtKind::CopyChunkAsync`]).
    pub(super) fn copy_chunk_async(&mut self, m: &syn::ExprMethodCall, out: &mut Block) {
        let span = m.method.span();
        let Some(array) = self.chunk_receiver(m, false) else { return };
        if !self.arrays[array.0].space.is_shared() {
            self.diag.error(
                m.receiver.span(),
                format!(
                    "`copy_chunk_async` copies into shared memory, and `{}` is not a shared array or shared slice",
                    self.arrays[array.0].name
                ),
            );
            return;
        }
        if self.refuse_store(array, "copy_chunk_async", m.receiver.span()) {
            return;
        }
        let [index, source, source_index] = m.args.iter().collect::<Vec<_>>()[..] else {
            self.diag.error(
                span,
                "`copy_chunk_async::<N>(c, source, s)` takes 3 arguments: the target's chunk, the slice to copy from and its chunk",
            );
            return;
        };
        let from = match self.named_array(source, ArraySpace::Global) {
            Some(a) => a,
            None => {
                self.diag.error(
                    source.span(),
                    "`copy_chunk_async` copies from a slice in global memory: name a slice parameter",
                );
                return;
            }
        };
        let receiver = self.arrays[array.0].name.clone();
        let (_, elem) = self.chunk_elem(array);
        let n = match self.chunk_turbofish(m, &receiver) {
            Ok(Some((n, at))) => {
                if !self.chunk_length_fits(n, elem, at) {
                    return;
                }
                let bytes = n * u64::from(elem.bits() / 8);
                if bytes < MIN_ASYNC_COPY_BYTES {
                    self.diag.error(
                        at,
                        format!(
                            "an async copy moves at least {MIN_ASYNC_COPY_BYTES} bytes: a chunk of {n} `{}` is {bytes}; copy {} at a time",
                            elem.name(),
                            MIN_ASYNC_COPY_BYTES / u64::from(elem.bits() / 8)
                        ),
                    );
                    return;
                }
                n
            }
            Ok(None) => {
                self.diag.error(span, "say how many elements the chunk has: `a.copy_chunk_async::<4>(c, source, s)`");
                return;
            }
            Err(()) => return,
        };
        let from_ty = self.array_elem_ty(from);
        if self.arrays[from.0].elem != elem {
            self.diag.error(
                source.span(),
                format!(
                    "mismatched types: `{}` holds `{}` and `{}` holds `{}`; an async copy moves elements of one type",
                    self.arrays[array.0].name,
                    elem.name(),
                    self.arrays[from.0].name,
                    self.arrays[from.0].elem.name()
                ),
            );
            return;
        }
        let Some(chunk) = self.chunk_index(array, index, n, m.span(), out) else { return };
        let Some(source_chunk) = self.chunk_index(from, source_index, n, m.span(), out) else { return };
        let stores = (0..n)
            .map(|j| {
                let from_at = self.chunk_element(source_chunk, j, span);
                let value = self.expr_of(
                    ExprKind::Load { array: from, index: Box::new(from_at), line: chunk.line },
                    from_ty,
                    span,
                );
                let index = self.chunk_element(chunk, j, span);
                let place = Place::Elem { array, index: Box::new(index), line: chunk.line };
                Self::stmt_of(StmtKind::Assign { place, op: None, value }, span)
            })
            .collect();
        out.push(Self::stmt_of(StmtKind::CopyChunkAsync { chunk, source: source_chunk, stores }, span));
    }

    /// The array of `space` that `e` names directly, if it names one.
    fn named_array(&self, e: &syn::Expr, space: ArraySpace) -> Option<ArrayId> {
        let syn::Expr::Path(p) = e else { return None };
        match self.lookup(&names::rust_name(p.path.get_ident()?)) {
            Some(Binding::Array(a)) if self.arrays[a.0].space == space => Some(a),
            _ => None,
        }
    }

    /// The element type of `array` (a thread's own array's may still be inferred) and its
    /// scalar, an unsuffixed integer's being `i32`, as Rust's default makes it.
    fn chunk_elem(&mut self, array: ArrayId) -> (TyId, Scalar) {
        let ty = self.array_elem_ty(array);
        let elem = match self.inferred(ty) {
            Inferred::Known(s) => s,
            _ => Scalar::I32,
        };
        (ty, elem)
    }

    /// The array a chunk method is called on (`store`: it must be mutable).
    fn chunk_receiver(&mut self, m: &syn::ExprMethodCall, store: bool) -> Option<ArrayId> {
        let name = m.method.to_string();
        let Some(array) = self.method_receiver_array(m) else {
            self.diag.error(m.receiver.span(), format!("`{name}` works on an array, named directly"));
            return None;
        };
        if store && self.refuse_store(array, &name, m.receiver.span()) {
            return None;
        }
        Some(array)
    }

    /// `N` of `load_chunk::<N>` or `store_chunk::<N>`, if the call names one, with its span.
    fn chunk_turbofish(&mut self, m: &syn::ExprMethodCall, array: &str) -> Result<Option<(u64, Span)>, ()> {
        let Some(turbofish) = &m.turbofish else { return Ok(None) };
        let len = match turbofish.args.iter().collect::<Vec<_>>()[..] {
            [syn::GenericArgument::Const(e)] => e.clone(),
            [syn::GenericArgument::Type(syn::Type::Path(p))] => {
                syn::Expr::Path(syn::ExprPath { attrs: vec![], qself: None, path: p.path.clone() })
            }
            _ => {
                self.diag
                    .error(turbofish.span(), format!("`{}` takes one constant, the chunk's length: `::<4>`", m.method));
                return Err(());
            }
        };
        let n = self.chunk_length(&len, array).ok_or(())?;
        Ok(Some((n, len.span())))
    }

    /// A chunk's length: a constant known without the block size; `array` names what it is
    /// the length of.
    fn chunk_length(&mut self, e: &syn::Expr, array: &str) -> Option<u64> {
        match self.const_length(e, array)? {
            Length::Fixed(n) => Some(n),
            Length::PerBlock(_) => {
                self.diag.error(e.span(), "a chunk's length must be known without the block size");
                None
            }
        }
    }

    /// Whether a chunk of `n` elements of `elem` is one a GPU can move aligned: a power of two
    /// of elements, at most [`MAX_CHUNK_BYTES`].
    fn chunk_length_fits(&mut self, n: u64, elem: Scalar, at: Span) -> bool {
        if !n.is_power_of_two() {
            self.diag.error(
                at,
                format!("a chunk of {n} elements: a chunk's length must be a power of two (1, 2, 4, 8, …), so that every chunk is aligned"),
            );
            return false;
        }
        let bytes = n.saturating_mul(u64::from(elem.bits() / 8));
        if bytes > MAX_CHUNK_BYTES {
            self.diag.error(
                at,
                format!(
                    "a chunk of {n} `{}`s is {bytes} bytes, more than the {MAX_CHUNK_BYTES} a chunk moves at once: move it in several chunks",
                    elem.name()
                ),
            );
            return false;
        }
        true
    }

    /// Binds the chunk's index `e` to a hidden variable, evaluated once (an atomic in it too).
    fn chunk_index(&mut self, array: ArrayId, e: &syn::Expr, len: u64, span: Span, out: &mut Block) -> Option<Chunk> {
        let index = self.expr(e)?;
        self.index_type(&index);
        let var = self.hidden_var("chunk", index.ty, span);
        out.push(Self::stmt_of(StmtKind::Let { var, init: Some(index) }, span));
        Some(Chunk { array, index: var, len, line: Self::line(span) })
    }

    /// The index of element `j` of `chunk`: `c as usize * N + j`.
    fn chunk_element(&mut self, chunk: Chunk, j: u64, span: Span) -> Expr {
        let usize_ty = self.types.known(Scalar::Usize);
        let index_ty = self.vars[chunk.index.0].ty;
        let c = self.expr_of(ExprKind::Var(chunk.index), index_ty, span);
        let c = self.expr_of(ExprKind::Cast(Box::new(c)), usize_ty, span);
        let n = self.expr_of(ExprKind::Int(i128::from(chunk.len)), usize_ty, span);
        let start = self.expr_of(ExprKind::Binary(BinOp::Mul, Box::new(c), Box::new(n)), usize_ty, span);
        let j = self.expr_of(ExprKind::Int(i128::from(j)), usize_ty, span);
        self.expr_of(ExprKind::Binary(BinOp::Add, Box::new(start), Box::new(j)), usize_ty, span)
    }
}

/// The `load_chunk` call a `let` binds, if its initializer is one.
pub(super) fn load_chunk_call(e: &syn::Expr) -> Option<&syn::ExprMethodCall> {
    match e {
        syn::Expr::MethodCall(m) if m.method == "load_chunk" => Some(m),
        _ => None,
    }
}
