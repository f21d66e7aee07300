//! How everything the emitters write is named, in CUDA and in Rust.
//!
//! The generated CUDA shares one translation unit with C++'s keywords, the
//! CUDA and libdevice functions, NVRTC's built-in headers and gsync's own
//! prelude and barrier code. Rather than listing the names a user may not
//! take, every name comes from one of two namespaces that nothing else can
//! occupy:
//!
//! - **User names** ([`user`]): the Rust spelling followed by one `_`
//!   (`n` → `n_`, `r#for` → `for_`, `sqrtf` → `sqrtf_`, `GSYNC_OK` →
//!   `GSYNC_OK_`). No C++ keyword, CUDA name or prelude name ends in a
//!   letter or digit followed by a single `_`. Characters a plain C
//!   identifier cannot carry are escaped, so that a user name never starts
//!   with `_` nor contains `__` (both are reserved in C++): every character
//!   outside ASCII letters and digits becomes `Xu` and four hex digits (`XU`
//!   and eight beyond U+FFFF), as does an `_` at the start, at the end or
//!   after another `_`, and an `X` that an escape could be read into
//!   (`größe` → `grXu00f6Xu00dfe_`, `_n` → `Xu005fn_`). The escape is
//!   undone by [`decode`], so the mapping is injective.
//! - **Generated names** ([`generated`]): `gsync_<stem>_<role>`, where the
//!   stem is the user name without its final `_` and the role is one word
//!   from [`ROLES`] (`gsync_a_len`, `gsync_i_end`). They end in a letter or
//!   digit, so never meet a user name; they start with `gsync_`, so never
//!   meet C++ or CUDA; and no name in the prelude ends in `_<role>`, which
//!   a unit test checks.
//!
//! A name declared twice in one kernel (shadowing, a second loop over `i`)
//! takes a `_2`, `_3`, … before its final `_` (`x_`, `x_2_`); the lowering
//! numbers declarations so that no two share a spelling (`x_2` is taken by
//! a variable of that name: [`crate::ir::UniqueName`]), and the escapes
//! keep distinct spellings apart, so every variable of a kernel has its own
//! name. The CUDA emitter applies the scheme ([`crate::emit::cuda_names`]).
//!
//! The Rust module the macro emits keeps the user's parameter names in the
//! public functions (they sit in their own module, where nothing else is
//! declared); every other generated Rust name is either mixed-site hygienic
//! or `v_` and the [`stem`] of its unique spelling ([`crate::emit::rust_names`]).

use proc_macro2::Ident;
use syn::ext::IdentExt;

/// The roles of generated names: `gsync_<stem>_<role>`.
pub const ROLES: &[&str] = &[
    "len",    // a slice's length parameter
    "end",    // a loop's hoisted end
    "last",   // an inclusive loop's last value
    "step",   // a `step_by` loop's hoisted step
    "bound",  // a `step_by` loop's end, bound before its step
    "start",  // a reversed loop's hoisted start
    "next",   // a reversed loop's counter
    "wide",   // a loop's 64-bit counter
    "fill",   // the index that fills a local array
    "value",  // a value evaluated once: a local array's repeated element, a stored collective
    "index",  // an element's index evaluated once (it holds a collective)
    "left",   // an assert_eq!'s left operand
    "right",  // … and its right one
    "lock",   // a `with_lock`'s lock index, evaluated once
    "offset", // a shared slice's byte offset in the dynamic shared memory
    "copy",   // a thread's element of a `put_range`
];

/// A Rust identifier as the name it denotes: `r#for` is `for`.
pub fn rust_name(ident: &Ident) -> String {
    ident.unraw().to_string()
}

/// The CUDA spelling of a user name (see the module documentation).
pub fn user(rust: &str) -> String {
    let mut out = stem(rust);
    out.push('_');
    out
}

/// A user name's stem: its CUDA spelling without the final `_`. Ends in an
/// ASCII letter or digit, never starts with `_`, never contains `__`; two
/// names never share it.
pub fn stem(rust: &str) -> String {
    let rust = rust.strip_prefix("r#").unwrap_or(rust);
    let chars: Vec<char> = rust.chars().collect();
    let mut out = String::with_capacity(rust.len() + 1);
    for (i, &c) in chars.iter().enumerate() {
        let next = chars.get(i + 1).copied();
        let plain = match c {
            // An `X` stays itself unless it would read as the start of an escape.
            'X' => !matches!(next, Some('u' | 'U')),
            // A single `_` between two kept characters stays.
            '_' => i > 0 && !out.ends_with('_') && next.is_some(),
            c => c.is_ascii_alphanumeric(),
        };
        if plain {
            out.push(c);
        } else if (c as u32) <= 0xffff {
            out.push_str(&format!("Xu{:04x}", c as u32));
        } else {
            out.push_str(&format!("XU{:08x}", c as u32));
        }
    }
    out
}

/// A user name made unique in its kernel: the `n`-th declaration (from 2) of
/// the same name.
pub fn numbered(rust: &str, n: u32) -> String {
    if n <= 1 {
        user(rust)
    } else {
        format!("{}_{n}_", stem(rust))
    }
}

/// A generated name: `gsync_<stem>_<role>` for the user name `c_name`.
pub fn generated(c_name: &str, role: &str) -> String {
    debug_assert!(ROLES.contains(&role), "unknown role {role}");
    format!("gsync_{}_{role}", c_name.strip_suffix('_').unwrap_or(c_name))
}

/// The C symbol of segment `index` of a split kernel: the user name of
/// `<kernel>_segment_<index>` (`smooth` → `smooth_segment_0_`).
pub fn segment(kernel_c_name: &str, index: usize) -> String {
    format!("{}_segment_{index}_", kernel_c_name.strip_suffix('_').unwrap_or(kernel_c_name))
}

/// Undoes [`user`]'s escapes; `None` for text [`user`] never produces.
#[cfg(test)]
pub fn decode(c_name: &str) -> Option<String> {
    let body = c_name.strip_suffix('_')?;
    let mut out = String::new();
    let mut rest = body;
    while let Some(c) = rest.chars().next() {
        let width = match (c, rest.as_bytes().get(1)) {
            ('X', Some(b'u')) => 4,
            ('X', Some(b'U')) => 8,
            _ => {
                out.push(c);
                rest = &rest[c.len_utf8()..];
                continue;
            }
        };
        let hex = rest.get(2..2 + width)?;
        out.push(char::from_u32(u32::from_str_radix(hex, 16).ok()?)?);
        rest = &rest[2 + width..];
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every name a test below feeds through the scheme.
    fn samples() -> Vec<String> {
        let mut names: Vec<String> = [
            "a",
            "n",
            "a_len",
            "len",
            "x_2",
            "x",
            "for",
            "r#for",
            "static_cast",
            "and_eq",
            "typeid",
            "sqrtf",
            "tanhf",
            "fminf",
            "GSYNC_OK",
            "GSYNC_BLOCK_SIZE",
            "gsync",
            "gsync_status",
            "gsync_barrier",
            "größe",
            "λ",
            "_n",
            "_",
            "__",
            "n_",
            "a__b",
            "X",
            "Xu",
            "XU",
            "Xu00f6",
            "dX",
            "XX",
            "u32",
            "threadIdx",
            "i_end",
            "va",
            "𝑥",
            "_X",
            "__syncthreads",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        // Every word of up to three characters over an alphabet with the escape's letters.
        let alphabet = ['a', 'u', 'U', 'X', '_', '0', 'ö'];
        let mut words = vec![String::new()];
        for _ in 0..3 {
            let longer: Vec<String> =
                words.iter().flat_map(|w| alphabet.iter().map(move |c| format!("{w}{c}"))).collect();
            names.extend(longer.iter().filter(|w| !w.starts_with('0')).cloned());
            words = longer;
        }
        names
    }

    #[test]
    fn user_names_decode_back_to_the_rust_name() {
        for name in samples() {
            let rust = name.strip_prefix("r#").unwrap_or(&name);
            assert_eq!(decode(&user(&name)).as_deref(), Some(rust), "{name} -> {}", user(&name));
        }
    }

    #[test]
    fn different_rust_names_get_different_c_names() {
        let mut seen = std::collections::HashMap::new();
        for name in samples() {
            let rust = name.strip_prefix("r#").unwrap_or(&name).to_string();
            if let Some(other) = seen.insert(user(&rust), rust.clone()) {
                assert_eq!(other, rust, "{} is the name of both", user(&rust));
            }
        }
    }

    /// The shape that keeps user names apart from C++, CUDA and the prelude.
    fn is_user_shaped(c: &str) -> bool {
        let bytes = c.as_bytes();
        c.is_ascii()
            && bytes.first().is_some_and(u8::is_ascii_alphabetic)
            && c.ends_with('_')
            && bytes[bytes.len() - 2].is_ascii_alphanumeric()
            && !c.contains("__")
            && c.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
    }

    #[test]
    fn user_names_end_in_one_underscore_and_are_never_reserved_in_cpp() {
        for name in samples() {
            for n in 1..4 {
                let c = numbered(&name, n);
                assert!(is_user_shaped(&c), "{name} -> {c}");
            }
        }
        for kernel in ["smooth", "größe", "_k", "for"] {
            let segment = segment(&user(kernel), 3);
            assert!(is_user_shaped(&segment), "{segment}");
        }
    }

    #[test]
    fn plain_names_stay_readable() {
        assert_eq!(user("block_sum"), "block_sum_");
        assert_eq!(user("r#for"), "for_");
        assert_eq!(user("static_cast"), "static_cast_");
        assert_eq!(user("GSYNC_OK"), "GSYNC_OK_");
        assert_eq!(user("größe"), "grXu00f6Xu00dfe_");
        assert_eq!(user("λ"), "Xu03bb_");
        assert_eq!(user("_n"), "Xu005fn_");
        assert_eq!(user("X"), "X_");
        assert_eq!(numbered("x", 2), "x_2_");
        assert_eq!(generated("a_", "len"), "gsync_a_len");
        assert_eq!(segment("smooth_", 0), "smooth_segment_0_");
    }

    #[test]
    fn generated_names_meet_neither_user_names_nor_each_other() {
        let mut seen = std::collections::HashMap::new();
        for name in samples() {
            for n in 1..3 {
                let c = numbered(&name, n);
                for role in ROLES {
                    let g = generated(&c, role);
                    assert!(!g.ends_with('_') && g.starts_with("gsync_"), "{g}");
                    if let Some(other) = seen.insert(g.clone(), (c.clone(), *role)) {
                        assert_eq!(other, (c.clone(), *role), "{g} is generated twice");
                    }
                }
            }
        }
    }

    /// The prelude, the profile hooks and every barrier fragment, as the runtime puts them
    /// together for a kernel with an empty body (with and without profiling, under every
    /// barrier): the names a generated name must not take. Taken from the runtime itself, so
    /// that the check holds for the runtime this crate is built with, in the workspace or not.
    fn runtime_cuda() -> Vec<String> {
        use gsync_runtime::__private::{Axes, SplitSpec};
        use gsync_runtime::{Barrier, KernelSpec};
        let mut sources = Vec::new();
        for profile in [false, true] {
            let spec = KernelSpec {
                name: "k",
                symbol: "k",
                rust_signature: "k",
                checked_body: "",
                unchecked_body: "",
                bounds_checks: true,
                profile,
                arrays: &[],
                grid_syncs: 1,
                default_threads: 0,
                blocks_per_sm: 0,
                split: SplitSpec::NONE,
                assertions: &[],
                axes: Axes::NONE,
                refused_block_sizes: &[],
            };
            sources.extend(Barrier::ALL.iter().map(|&barrier| spec.source(barrier, 32)));
        }
        sources
    }

    #[test]
    fn no_runtime_name_is_shaped_like_a_user_or_generated_name() {
        for source in runtime_cuda() {
            let words = source.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'));
            for word in words.filter(|w| w.starts_with(|c: char| c.is_ascii_alphabetic())) {
                assert!(!is_user_shaped(word), "the runtime's CUDA uses `{word}`, a user name");
                let role = word.rsplit('_').next().unwrap_or("");
                assert!(
                    !(word.starts_with("gsync_") && word.matches('_').count() >= 2 && ROLES.contains(&role)),
                    "the runtime's CUDA uses `{word}`, a generated name"
                );
            }
        }
    }
}
