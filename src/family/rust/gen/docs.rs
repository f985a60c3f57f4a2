//! What the docs of an item say, as the API reader needs it: their lines with where they are in
//! the file, whether they announce a panic, and their Rust examples as rustdoc runs them.

use proc_macro2::Span;
use quote::ToTokens;
use syn::spanned::Spanned;
use syn::{Attribute, Meta};

use super::model::{Api, Example};

/// The line a span starts on.
pub(super) fn line(span: Span) -> usize {
    span.start().line
}

/// The value of `name = "..."` in an attribute (`doc`, `path`).
pub(super) fn str_lit(meta: &Meta, name: &str) -> Option<String> {
    let nv = meta.require_name_value().ok()?;
    let lit = syn::parse2::<syn::LitStr>(nv.value.to_token_stream()).ok()?;
    nv.path.is_ident(name).then(|| lit.value())
}

/// The doc text line by line (`/// x`: `x`), with the line in the file.
pub(super) fn doc_lines(attrs: &[Attribute]) -> Vec<(usize, String)> {
    let mut out: Vec<(usize, String)> = Vec::new();
    for (a, text) in attrs
        .iter()
        .filter_map(|a| Some((a, str_lit(&a.meta, "doc")?)))
    {
        let lines = text
            .split('\n')
            .map(|l| l.strip_prefix(' ').unwrap_or(l).to_string());
        out.extend(lines.enumerate().map(|(k, l)| (line(a.span()) + k, l)));
    }
    out
}
/// A `# Panics` section, or a sentence that says when it panics ("Panics if `n` is zero").
pub(super) fn documents_panics(attrs: &[Attribute]) -> bool {
    doc_lines(attrs)
        .iter()
        .any(|(_, l)| l.to_lowercase().contains("panic"))
}
/// Whether a fence's info string (`rust,no_run`, `text`) is a Rust block rustdoc runs.
fn runs_as_rust(info: &str) -> bool {
    let tags: Vec<&str> = info
        .split([',', ' ', '\t'])
        .filter(|t| !t.is_empty())
        .collect();
    let off = |t: &&str| ["ignore", "no_run", "compile_fail", "should_panic"].contains(t);
    let rust = |t: &&str| ["rust", "test_harness"].contains(t) || t.starts_with("edition");
    !tags.iter().any(|t| off(t) || t.starts_with("ignore-"))
        && (tags.contains(&"rust") || tags.iter().all(rust))
}
/// The docs' Rust blocks as examples of `item`, each from its first code line.
pub(super) fn examples(api: &mut Api, file: &str, item: &str, attrs: &[Attribute]) {
    // A code line as rustdoc compiles it: `# x` -> `x`, `#` -> empty, `##x` -> `#x`.
    let unhide = |l: &str| match l.trim().strip_prefix('#') {
        Some(rest) if rest.starts_with('#') => l.replacen("##", "#", 1),
        Some(rest) if rest.is_empty() || rest.starts_with(' ') => rest.replacen(' ', "", 1),
        _ => l.to_string(),
    };
    // The open block: whether it runs, its first line, its code lines.
    let (mut open, mut blocks) = (None::<(bool, usize, Vec<String>)>, Vec::new());
    for (no, l) in doc_lines(attrs) {
        let t = l.trim_start();
        let fence = t.starts_with("```") || t.starts_with("~~~");
        match open.take() {
            Some((rust, first, body)) if fence => {
                blocks.extend(Some((first, body)).filter(|_| rust))
            }
            Some((rust, first, mut body)) => {
                body.push(unhide(&l));
                open = Some((rust, first, body));
            }
            None if fence => {
                open = Some((runs_as_rust(t.trim_matches(['`', '~'])), no + 1, vec![]))
            }
            None => {}
        }
    }
    blocks.extend(open.filter(|o| o.0).map(|o| (o.1, o.2)));
    for (line, code) in blocks {
        let (file, item, line, code) = (file.into(), item.into(), line as u32, code.join("\n"));
        api.examples.push(Example {
            file,
            line,
            item,
            code,
        });
    }
}
