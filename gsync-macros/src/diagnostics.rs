//! Errors are collected, not thrown: the user sees every problem at once,
//! each on its own span.

use proc_macro2::Span;
use std::fmt::Display;

/// Where a span starts and ends: line, column, line, column.
type SpanPlace = (usize, usize, usize, usize);

/// The list of errors found so far.
#[derive(Default)]
pub struct Diagnostics {
    errors: Vec<syn::Error>,
    /// Where and what each error said: a device function's body is lowered once per call,
    /// and its mistakes are reported once.
    said: std::collections::HashSet<(SpanPlace, String)>,
}

impl Diagnostics {
    pub fn error(&mut self, span: Span, message: impl Display) {
        let message = message.to_string();
        let (start, end) = (span.start(), span.end());
        if self.said.insert(((start.line, start.column, end.line, end.column), message.clone())) {
            self.errors.push(syn::Error::new(span, message));
        }
    }

    /// An error with a second message on another span (a "note: ... here").
    pub fn error_with_note(&mut self, span: Span, message: impl Display, note_span: Span, note: impl Display) {
        let mut e = syn::Error::new(span, message);
        e.combine(syn::Error::new(note_span, note));
        self.errors.push(e);
    }

    /// An error with notes on other spans, in order.
    pub fn error_with_notes(&mut self, span: Span, message: impl Display, notes: Vec<(Span, String)>) {
        let mut e = syn::Error::new(span, message);
        for (at, note) in notes {
            e.combine(syn::Error::new(at, note));
        }
        self.errors.push(e);
    }

    pub fn push(&mut self, e: syn::Error) {
        self.errors.push(e);
    }

    pub fn has_errors(&self) -> bool {
        !self.errors.is_empty()
    }

    /// All errors combined into one, if any.
    pub fn into_error(self) -> Option<syn::Error> {
        self.errors.into_iter().reduce(|mut a, b| {
            a.combine(b);
            a
        })
    }
}

/// The 1-based source line of a span (0 where the compiler gives none).
pub fn line_of(span: Span) -> u32 {
    span.start().line as u32
}
