//! A generator-driven test of the macro's front end: random kernels through
//! [`crate::expand::kernel`], each of which must either expand into CUDA that NVRTC
//! accepts (fused, and split where the kernel splits) or come back as errors
//! that all point into the kernel's source. Never a panic, never a kernel
//! that only NVRTC rejects.
//!
//! The seed is fixed so that CI is reproducible; `GSYNC_RANDOM_SEED=<n>`
//! explores others and `GSYNC_RANDOM_KERNELS=<n>` sets how many kernels run.
//! A failure prints the seed, the case and the kernel; case `c` of seed `s`
//! is case 0 of seed `s + c`.

mod generate;
mod nvrtc;
mod placement;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

const DEFAULT_SEED: u64 = 0x6773_796e_6331;
const DEFAULT_CASES: usize = 300;

/// What `expand` made of one random kernel.
enum Outcome {
    /// The CUDA the kernel expanded into.
    Expanded(nvrtc::Sources),
    /// It was rejected with errors, all on spans in its source.
    Rejected,
}

fn env_number(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

#[test]
fn random_kernels_expand_to_cuda_nvrtc_accepts_or_to_spanned_errors() {
    // Chains of thousands of operands are generated on purpose, and syn's parsing and
    // dropping of what the test reads back recurse once per operand.
    let checks = std::thread::Builder::new().stack_size(256 << 20).spawn(check_random_kernels);
    if let Err(panic) = checks.expect("a test thread").join() {
        std::panic::resume_unwind(panic);
    }
}

/// Expands the random kernels and compiles what the macro accepts.
fn check_random_kernels() {
    let seed = env_number("GSYNC_RANDOM_SEED").unwrap_or(DEFAULT_SEED);
    let cases = env_number("GSYNC_RANDOM_KERNELS").map_or(DEFAULT_CASES, |n| n as usize);
    let mut expanded = Vec::new();
    let mut failures = Vec::new();
    let mut rejected = 0;
    for case in 0..cases {
        let mut rng = ChaCha8Rng::seed_from_u64(seed.wrapping_add(case as u64));
        let source = generate::kernel(&mut rng, case);
        match run(&source) {
            Ok(Outcome::Expanded(sources)) => expanded.push((case, source, sources)),
            Ok(Outcome::Rejected) => rejected += 1,
            Err(why) => failures.push(report(seed, case, &source, &why)),
        }
    }
    eprintln!("seed {seed}: {} kernels expanded, {rejected} rejected with spanned errors", expanded.len());
    if !failures.is_empty() {
        panic!("{} of {cases} random kernels failed:\n\n{}", failures.len(), failures.join("\n\n"));
    }
    assert!(expanded.len() * 4 >= cases, "too few kernels get through the checks to test the emitters");
    if !nvrtc::available() {
        return;
    }
    let kernels: Vec<&nvrtc::Sources> = expanded.iter().map(|(.., s)| s).collect();
    let rejected_by_nvrtc = nvrtc::failures(&kernels);
    let mut logs: std::collections::BTreeMap<usize, Vec<String>> = Default::default();
    for (i, log) in rejected_by_nvrtc {
        logs.entry(i).or_default().push(log);
    }
    let failures: Vec<String> = logs
        .into_iter()
        .map(|(i, logs)| {
            let (case, source, _) = &expanded[i];
            report(seed, *case, source, &format!("NVRTC rejected its CUDA:\n{}", logs.join("\n")))
        })
        .collect();
    assert!(failures.is_empty(), "{} random kernels failed in NVRTC:\n\n{}", failures.len(), failures.join("\n\n"));
}

fn report(seed: u64, case: usize, source: &str, why: &str) -> String {
    format!("seed {seed}, case {case}: {why}\n{source}")
}

/// Expands one kernel as the compiler would: the attribute's arguments and
/// the function without it. `Err` says what went wrong.
fn run(source: &str) -> Result<Outcome, String> {
    let file: syn::File = syn::parse_str(source).map_err(|e| format!("the generator wrote invalid Rust: {e}"))?;
    let mut items = crate::lower::ModuleItems::default();
    let mut kernel = None;
    for item in file.items {
        match item {
            syn::Item::Fn(f) if f.attrs.iter().any(|a| a.path().is_ident("device")) => {
                let mut diag = crate::diagnostics::Diagnostics::default();
                items.functions.push(crate::parse::device_fn(&f, &mut diag));
                if diag.has_errors() {
                    return Err("a generated device function does not parse".into());
                }
            }
            syn::Item::Fn(f) => kernel = Some(f),
            _ => return Err("the generator wrote an item that is no function".into()),
        }
    }
    let mut func = kernel.ok_or("no kernel")?;
    let attr = func.attrs.iter().position(|a| a.path().is_ident("grid_phases")).ok_or("no #[grid_phases]")?;
    let args = match func.attrs.remove(attr).meta {
        syn::Meta::List(list) => list.tokens,
        _ => proc_macro2::TokenStream::new(),
    };
    let output = std::panic::catch_unwind(|| crate::expand::kernel(args, &func, &items)).map_err(|panic| {
        let message = panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        format!("the macro panicked: {message}")
    })?;
    let lines = source.lines().count();
    let errors = compile_errors(output.clone());
    if !errors.is_empty() {
        // Line 1 is a comment, so a span there is `Span::call_site()`.
        let misplaced: Vec<String> = errors
            .iter()
            .filter(|(span, _)| !(2..=lines).contains(&span.start().line))
            .map(|(span, message)| format!("{message:?} at {:?}", span.start()))
            .collect();
        if !misplaced.is_empty() {
            return Err(format!("errors without a span in the kernel: {}", misplaced.join("; ")));
        }
        return Ok(Outcome::Rejected);
    }
    let misplaced = misplaced_calls(&func, &items);
    if !misplaced.is_empty() {
        return Err(misplaced.join("; "));
    }
    let file: syn::File = syn::parse2(output).map_err(|e| format!("the expansion does not parse: {e}"))?;
    nvrtc::Sources::from_expansion(&file).map(Outcome::Expanded)
}

/// The calls of a kernel the macro accepted that run where Rust would not run them
/// ([`placement`]), lowered again to see its IR.
fn misplaced_calls(func: &syn::ItemFn, items: &crate::lower::ModuleItems) -> Vec<String> {
    let mut diag = crate::diagnostics::Diagnostics::default();
    let none = crate::parse::Substitution::default();
    let sig = crate::parse::signature(func, &none, &mut diag);
    match crate::lower::kernel(&sig, &func.block, 0, items, &none, &mut diag) {
        Some(k) => placement::misplaced_calls(&k),
        None => Vec::new(),
    }
}

/// Every `compile_error!` in an expansion: its span and message.
fn compile_errors(tokens: proc_macro2::TokenStream) -> Vec<(proc_macro2::Span, String)> {
    let mut found = Vec::new();
    let mut tokens = tokens.into_iter().peekable();
    while let Some(token) = tokens.next() {
        match token {
            proc_macro2::TokenTree::Ident(i) if i == "compile_error" => {
                let message = tokens.nth(1).map(|t| t.to_string()).unwrap_or_default();
                found.push((i.span(), message));
            }
            proc_macro2::TokenTree::Group(g) => found.extend(compile_errors(g.stream())),
            _ => {}
        }
    }
    found
}
