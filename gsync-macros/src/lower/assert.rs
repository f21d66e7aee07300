//! `assert!`, `assert_eq!`, `assert_ne!` and their `debug_` forms: device checks that
//! report through the status word.

use super::{Block, Expr, Lowerer, StmtKind};
use crate::ir::{AssertCheck, Assertion, BinOp, Scalar};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;

/// The assertion macros kernels accept.
const MACROS: &[&str] = &["assert", "assert_eq", "assert_ne", "debug_assert", "debug_assert_eq", "debug_assert_ne"];

/// Whether a macro is one of the assertions.
pub(super) fn is_assertion(mac: &syn::Macro) -> bool {
    mac.path.segments.last().is_some_and(|s| MACROS.contains(&s.ident.to_string().as_str()))
}

impl Lowerer<'_> {
    /// Lowers an assertion macro to an `Assert` statement.
    pub(super) fn assertion(&mut self, mac: &syn::Macro, out: &mut Block) {
        let span = mac.span();
        let name = mac.path.segments.last().map(|s| s.ident.to_string()).unwrap_or_default();
        let args = match mac.parse_body_with(Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated) {
            Ok(args) => args.into_iter().collect::<Vec<_>>(),
            Err(e) => {
                self.diag.error(e.span(), format!("`{name}!` takes a condition and an optional message: {e}"));
                return;
            }
        };
        let debug_only = name.starts_with("debug_");
        let compare = match name.trim_start_matches("debug_") {
            "assert_eq" => Some(BinOp::Eq),
            "assert_ne" => Some(BinOp::Ne),
            _ => None,
        };
        let operands = if compare.is_some() { 2 } else { 1 };
        if args.len() < operands {
            let usage = if compare.is_some() { "two values" } else { "a condition" };
            self.diag.error(span, format!("`{name}!` takes {usage} and an optional message"));
            return;
        }
        let Some(user_message) = self.assertion_message(&name, &args[operands..]) else { return };
        let (lowered, calls): (Vec<Option<Expr>>, _) =
            self.collect_calls(|l| args[..operands].iter().map(|a| l.expr(a)).collect());
        if debug_only && !calls.is_empty() {
            self.diag.error(
                span,
                format!("`{name}!` calls a device function here, which would run in builds without debug assertions too, where Rust skips the whole check: use `assert!`, or call the function in a `let` first"),
            );
            return;
        }
        self.pending.extend(calls);
        let Some(lowered) = lowered.into_iter().collect::<Option<Vec<Expr>>>() else { return };
        for e in &lowered {
            if super::expr::expr_has_effects(e) {
                self.diag.error(e.span, format!("bind this value with `let` first: `{name}!` may not run an atomic"));
                return;
            }
        }
        let mut lowered = lowered.into_iter();
        let (check, default) = match compare {
            None => {
                let cond = lowered.next().expect("one operand");
                self.require(cond.ty, Scalar::Bool, cond.span, &format!("the condition of `{name}!`"));
                let tokens = &args[0];
                let text = condition_text(&quote::quote!(#tokens).to_string());
                (AssertCheck::Holds(cond), format!("assertion failed: {text}"))
            }
            Some(op) => {
                let (left, right) = (lowered.next().expect("two operands"), lowered.next().expect("two operands"));
                self.unify(left.ty, right.ty, span);
                let default = format!("assertion `left {} right` failed", op.symbol());
                (AssertCheck::Compare { op, left, right }, default)
            }
        };
        let message = match (user_message, compare) {
            (Some(m), None) => m,
            (Some(m), Some(_)) => format!("{default}: {m}"),
            (None, _) => default,
        };
        let assertion = Assertion { number: self.assertions, line: Self::line(span), message, debug_only };
        self.assertions += 1;
        out.push(Self::stmt_of(StmtKind::Assert { check, assertion }, span));
    }

    /// The message after an assertion's operands: a string literal without formatting
    /// arguments (the GPU cannot format), or nothing. `None` after an error.
    fn assertion_message(&mut self, name: &str, rest: &[syn::Expr]) -> Option<Option<String>> {
        match rest {
            [] => Some(None),
            [syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. })] => {
                let text = s.value();
                match unescape_braces(&text) {
                    Some(message) => Some(Some(message)),
                    None => {
                        self.diag.error(
                            s.span(),
                            format!("`{name}!`'s message is printed by the host, which has no values to format it with: write it without `{{}}`"),
                        );
                        None
                    }
                }
            }
            [first, ..] if rest.len() > 1 => {
                self.diag.error(
                    first.span(),
                    format!("`{name}!` in a kernel takes a plain string message: formatting arguments are not supported on the GPU"),
                );
                None
            }
            [other, ..] => {
                self.diag.error(other.span(), format!("the message of `{name}!` must be a string literal"));
                None
            }
        }
    }
}

/// A condition's tokens as rustc prints them in its panic message, near enough: without
/// the spaces the token printer puts around brackets, dots and paths.
fn condition_text(tokens: &str) -> String {
    let mut text = tokens.to_owned();
    for (spaced, tight) in [
        (" [", "["),
        ("[ ", "["),
        (" ]", "]"),
        (" (", "("),
        ("( ", "("),
        (" )", ")"),
        (" .", "."),
        (". ", "."),
        (" ,", ","),
        (" :: ", "::"),
        ("! ", "!"),
    ] {
        text = text.replace(spaced, tight);
    }
    text
}

/// A format string without placeholders as the text it prints (`{{` → `{`); `None` when it
/// has a placeholder.
fn unescape_braces(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '{' || c == '}' {
            if chars.peek() != Some(&c) {
                return None;
            }
            chars.next();
        }
        out.push(c);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::unescape_braces;

    #[test]
    fn conditions_print_without_token_spacing() {
        assert_eq!(super::condition_text("a [i] > 0"), "a[i] > 0");
        assert_eq!(
            super::condition_text("x . is_nan () && ! f (a , b) && u32 :: MAX != y"),
            "x.is_nan() && !f(a, b) && u32::MAX != y"
        );
    }

    #[test]
    fn doubled_braces_print_single_and_placeholders_are_refused() {
        assert_eq!(unescape_braces("a {{b}} c").as_deref(), Some("a {b} c"));
        assert_eq!(unescape_braces("x = {}"), None);
        assert_eq!(unescape_braces("{x}"), None);
    }
}
