//! The mutation points of a Rust source file, found the way cargo-mutants (<https://mutants.rs>)
//! finds them, so a Rust project's mutation score means what its users already know from that
//! tool: function bodies replaced by a value of the return type, binary operators swapped, `!`
//! and unary `-` deleted. The points are byte ranges (see [`Point`]) that the language-neutral
//! driver applies to a copy of the tree.
//!
//! Where it knowingly differs from cargo-mutants 27.1.0: no match-arm, match-guard or
//! struct-field mutants; the values inside `Option`, `Vec`, `Result`, `Box` and tuples are
//! `Default::default()` rather than every value of the inner type; no body replacement for
//! `const fn`s, `Drop::drop`, `main` or `impl Trait` returns (`impl Iterator` included); `new`
//! is mutated; nothing in a constant context (`const`/`static` initializers, array lengths, enum
//! discriminants, const generics) is. [`points_from_cargo_mutants`] reads the installed tool's
//! own list instead, for when `cargo mutants` is on the machine and its exact set is wanted.

use std::collections::hash_map::{Entry, HashMap};
use std::path::{Component, Path, PathBuf};

use proc_macro2::{LineColumn, TokenStream};
use quote::ToTokens;
use serde::Deserialize;
use syn::visit::{self, Visit};
use syn::{Attribute, BinOp, Block, Expr, ImplItem, Item, ReturnType, TraitItem, Type, UnOp};

use crate::family::mutants::point::{line_of, Point};

/// The mutation points of one Rust source file, in source order, without duplicates; none when
/// the file does not parse (a file the compiler rejects has no mutants worth building).
pub fn points(source: &str) -> Vec<Point> {
    let Ok(file) = syn::parse_file(source) else {
        return Vec::new();
    };
    // syn drops a byte-order mark before lexing, so its columns count from after it.
    let text = source.strip_prefix('\u{feff}').unwrap_or(source);
    let mut finder = Finder {
        source,
        text,
        base: source.len() - text.len(),
        lines: LineStarts::new(text),
        found: Vec::new(),
        in_const: false,
        impl_trait: None,
    };
    finder.visit_file(&file);
    finder.finish()
}

/// Byte offsets of the starts of a text's lines, to turn proc-macro2's line/column (1-based line,
/// 0-based column counted in chars, not bytes) into byte offsets.
struct LineStarts(Vec<usize>);

impl LineStarts {
    fn new(text: &str) -> Self {
        let rest = memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1);
        LineStarts(std::iter::once(0).chain(rest).collect())
    }

    /// The byte offset of `at` in `text`; None when the line or column is past the text. A
    /// column may be the line's length: a token ending the line ends there.
    fn offset(&self, text: &str, at: LineColumn) -> Option<usize> {
        let start = *self.0.get(at.line.checked_sub(1)?)?;
        let end = self.0.get(at.line).map_or(text.len(), |next| next - 1);
        let line = &text[start..end];
        let mut ends = line.char_indices().map(|(i, _)| i).chain([line.len()]);
        ends.nth(at.column).map(|i| start + i)
    }
}

/// The syntax-tree walk that collects points; its state is what decides whether an expression
/// may be mutated where it stands.
struct Finder<'s> {
    source: &'s str,
    /// The text syn lexed (`source` without a byte-order mark) and where it starts in `source`.
    text: &'s str,
    base: usize,
    lines: LineStarts,
    found: Vec<Point>,
    /// Inside a constant context (a `const`/`static` initializer, an array length, an enum
    /// discriminant, a const generic argument): a swapped operator there changes a type or
    /// fails const evaluation rather than testing anything.
    in_const: bool,
    /// The last segment of the trait the enclosing `impl` implements (`Drop` matters).
    impl_trait: Option<String>,
}

impl Finder<'_> {
    /// The points in source order: a body's replacements start at its `{`, before the
    /// operators inside it; equal starts keep the order they were found in.
    fn finish(mut self) -> Vec<Point> {
        self.found.sort_by_key(|p| p.start);
        self.found
            .dedup_by(|a, b| (a.start, a.end, &a.replacement) == (b.start, b.end, &b.replacement));
        self.found
    }

    /// The byte range in `source` from the first token's start to the last token's end.
    fn range(&self, tokens: TokenStream) -> Option<(usize, usize)> {
        let mut trees = tokens.into_iter();
        let first = trees.next()?;
        let last = trees.last();
        let start = self.lines.offset(self.text, first.span().start())?;
        let end_span = last.as_ref().unwrap_or(&first).span();
        let end = self.lines.offset(self.text, end_span.end())?;
        (start <= end).then_some((self.base + start, self.base + end))
    }

    fn push(&mut self, (start, end): (usize, usize), replacement: String, operator: String) {
        let line = line_of(self.source, start);
        self.found.push(Point {
            line,
            start,
            end,
            replacement,
            operator,
        });
    }

    /// Runs `walk` with the constant-context flag set to `in_const`, restoring it afterwards.
    fn within(&mut self, in_const: bool, walk: impl FnOnce(&mut Self)) {
        let outer = std::mem::replace(&mut self.in_const, in_const);
        walk(self);
        self.in_const = outer;
    }

    /// The body replacements of a function whose block may be replaced.
    fn body(&mut self, output: &ReturnType, block: &Block) {
        if block.stmts.is_empty() {
            return;
        }
        let tokens = block.to_token_stream();
        let original = tokens.to_string();
        let Some(range) = self.range(tokens) else {
            return;
        };
        for value in return_values(output) {
            let replacement = body_text(value);
            if same_tokens(&original, &replacement) {
                continue;
            }
            self.push(range, replacement, format!("body → {value}"));
        }
    }

    /// Each of `swaps` in place of the operator token(s) `op`, named by `name(original, swap)`.
    fn swap(&mut self, op: TokenStream, swaps: &[&str], name: fn(&str, &str) -> String) {
        let Some((start, end)) = self.range(op) else {
            return;
        };
        let original = &self.source[start..end];
        for swap in swaps {
            self.push((start, end), swap.to_string(), name(original, swap));
        }
    }

    /// A function: an `unsafe fn` not at all (as cargo-mutants), its body replaced when `replace`
    /// and it is not a `const fn` (whose body must stay const-evaluable, which
    /// `Default::default()` is not), and what is inside it walked as run-time code.
    fn function(
        &mut self,
        sig: &syn::Signature,
        block: Option<&Block>,
        replace: bool,
        walk: impl FnOnce(&mut Self),
    ) {
        let Some(block) = block.filter(|_| sig.unsafety.is_none()) else {
            return;
        };
        self.within(false, |v| {
            if replace && sig.constness.is_none() {
                v.body(&sig.output, block);
            }
            walk(v);
        });
    }
}

/// The attributes of whichever variant `$node` is, `&[]` for those without (`Item::Verbatim`).
/// Only the expressions that hold other code are listed for `Expr`: there an attribute sits on
/// a statement (`#[cfg(test)] check();`).
macro_rules! attrs_of {
    ($node:expr, $kind:ident: $($variant:ident),*) => {
        match $node {
            $($kind::$variant(inner) => &inner.attrs,)*
            _ => &[],
        }
    };
}

/// Visit methods that walk their node unless its attributes exclude it (see [`excluded`]).
macro_rules! unless_excluded {
    ($($method:ident($node:ident: $ty:ty) => $attrs:expr;)*) => {$(
        fn $method(&mut self, $node: &'ast $ty) {
            if !excluded($attrs) {
                visit::$method(self, $node);
            }
        }
    )*};
}

/// Visit methods that walk their node as a constant context (see [`Finder::in_const`]).
macro_rules! constant {
    ($($method:ident($ty:ty);)*) => {$(
        fn $method(&mut self, node: &'ast $ty) {
            self.within(true, |v| visit::$method(v, node));
        }
    )*};
}

impl<'ast> Visit<'ast> for Finder<'_> {
    unless_excluded! {
        visit_file(n: syn::File) => &n.attrs;
        visit_item(n: Item) => attrs_of!(n, Item: Const, Enum, ExternCrate, Fn, ForeignMod, Impl,
            Macro, Mod, Static, Struct, Trait, TraitAlias, Type, Union, Use);
        visit_impl_item(n: ImplItem) => attrs_of!(n, ImplItem: Const, Fn, Type, Macro);
        visit_trait_item(n: TraitItem) => attrs_of!(n, TraitItem: Const, Fn, Type, Macro);
        visit_local(n: syn::Local) => &n.attrs;
        visit_arm(n: syn::Arm) => &n.attrs;
        visit_expr(n: Expr) => attrs_of!(n, Expr: Array, Assign, Async, Binary, Block, Call,
            Closure, ForLoop, If, Loop, Match, MethodCall, Paren, Return, Struct, Tuple, Unary,
            Unsafe, While);
    }

    constant! {
        visit_item_const(syn::ItemConst);
        visit_item_static(syn::ItemStatic);
        visit_impl_item_const(syn::ImplItemConst);
        visit_trait_item_const(syn::TraitItemConst);
        visit_const_param(syn::ConstParam);
        visit_expr_const(syn::ExprConst);
    }

    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        let replace = f.sig.ident != "main";
        self.function(&f.sig, Some(&f.block), replace, |v| {
            visit::visit_item_fn(v, f)
        });
    }

    /// Replacing `Drop::drop`'s body only leaks, which tests rarely see.
    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        let replace = self.impl_trait.as_deref() != Some("Drop") || f.sig.ident != "drop";
        self.function(&f.sig, Some(&f.block), replace, |v| {
            visit::visit_impl_item_fn(v, f)
        });
    }

    fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
        let block = f.default.as_ref();
        self.function(&f.sig, block, true, |v| visit::visit_trait_item_fn(v, f));
    }

    /// An `impl Default` is left alone, as cargo-mutants does: there is no other default to
    /// offer, and `body → Default::default()` there recurses forever.
    fn visit_item_impl(&mut self, i: &'ast syn::ItemImpl) {
        let name = i
            .trait_
            .as_ref()
            .and_then(|(_, path, _)| path.segments.last());
        let name = name.map(|segment| segment.ident.to_string());
        if name.as_deref() == Some("Default") {
            return;
        }
        let outer = std::mem::replace(&mut self.impl_trait, name);
        visit::visit_item_impl(self, i);
        self.impl_trait = outer;
    }

    fn visit_item_trait(&mut self, i: &'ast syn::ItemTrait) {
        let outer = self.impl_trait.take();
        visit::visit_item_trait(self, i);
        self.impl_trait = outer;
    }

    fn visit_variant(&mut self, i: &'ast syn::Variant) {
        if !excluded(&i.attrs) {
            self.within(true, |v| visit::visit_variant(v, i));
        }
    }

    fn visit_type_array(&mut self, i: &'ast syn::TypeArray) {
        self.visit_type(&i.elem);
        self.within(true, |v| v.visit_expr(&i.len));
    }

    fn visit_expr_repeat(&mut self, i: &'ast syn::ExprRepeat) {
        self.visit_expr(&i.expr);
        self.within(true, |v| v.visit_expr(&i.len));
    }

    fn visit_generic_argument(&mut self, i: &'ast syn::GenericArgument) {
        let in_const = self.in_const || matches!(i, syn::GenericArgument::Const(_));
        self.within(in_const, |v| visit::visit_generic_argument(v, i));
    }

    /// A closure's body runs at run time even when a `static` holds the closure.
    fn visit_expr_closure(&mut self, i: &'ast syn::ExprClosure) {
        self.within(false, |v| visit::visit_expr_closure(v, i));
    }

    /// Attributes hold no code that runs: `#[doc = …]`, `#[cfg(…)]`.
    fn visit_attribute(&mut self, _: &'ast Attribute) {}

    /// Patterns are matched, not computed: `-1 =>` is a literal, not a negation.
    fn visit_pat(&mut self, _: &'ast syn::Pat) {}

    /// The arguments of `with_capacity` only size an allocation: cargo-mutants' default
    /// `skip_calls`, since no test can tell the mutants apart.
    fn visit_expr_call(&mut self, e: &'ast syn::ExprCall) {
        let callee = match &*e.func {
            Expr::Path(path) => path.path.segments.last(),
            _ => None,
        };
        if callee.is_none_or(|segment| segment.ident != SKIP_CALLS) {
            visit::visit_expr_call(self, e);
        }
    }

    fn visit_expr_method_call(&mut self, e: &'ast syn::ExprMethodCall) {
        if e.method != SKIP_CALLS {
            visit::visit_expr_method_call(self, e);
        }
    }

    fn visit_expr_binary(&mut self, e: &'ast syn::ExprBinary) {
        if !self.in_const {
            let name = |original: &str, swap: &str| format!("{original} → {swap}");
            self.swap(e.op.to_token_stream(), binary_swaps(&e.op), name);
        }
        visit::visit_expr_binary(self, e);
    }

    fn visit_expr_unary(&mut self, e: &'ast syn::ExprUnary) {
        // `!x` → `x`, `-x` → `x`; a deref `*x` has no other meaning to offer.
        if !self.in_const && matches!(e.op, UnOp::Not(_) | UnOp::Neg(_)) {
            let name = |original: &str, _: &str| format!("delete {original}");
            self.swap(e.op.to_token_stream(), &[""], name);
        }
        visit::visit_expr_unary(self, e);
    }
}

/// The one call whose arguments cargo-mutants leaves alone by default (`skip_calls`).
const SKIP_CALLS: &str = "with_capacity";

/// `value` as a whole function body.
fn body_text(value: &str) -> String {
    if value == "()" {
        "{}".to_string()
    } else {
        format!("{{ {value} }}")
    }
}

/// Whether `replacement` is the same code as the body it would replace (a function whose body is
/// already `{ 0 }` has no `body → 0` mutant: it could never be caught).
fn same_tokens(original: &str, replacement: &str) -> bool {
    replacement
        .parse::<TokenStream>()
        .is_ok_and(|tokens| tokens.to_string() == original)
}

/// cargo-mutants' values for a function's return type (`fnvalue.rs`, flattened: the inner
/// values of `Option`, `Vec`, `Result` and `Box` are `Default::default()`).
fn return_values(output: &ReturnType) -> &'static [&'static str] {
    match output {
        ReturnType::Default => &["()"],
        ReturnType::Type(_, ty) => type_values(ty),
    }
}

/// The values of a written type, looked at through parentheses and macro groups.
fn type_values(ty: &Type) -> &'static [&'static str] {
    match ty {
        Type::Paren(inner) => type_values(&inner.elem),
        Type::Group(inner) => type_values(&inner.elem),
        Type::Tuple(tuple) if tuple.elems.is_empty() => &["()"],
        // `!` has no value; `impl Trait` has no nameable one.
        Type::Never(_) | Type::ImplTrait(_) => &[],
        Type::Reference(reference) => reference_values(&reference.elem),
        Type::Path(path) if path.qself.is_none() => path_values(&path.path),
        _ => &["Default::default()"],
    }
}

/// `&str` has literals; `&[T]` and `&mut [T]` implement `Default`; any other reference is made
/// by leaking a default value, as cargo-mutants does, since `&T: Default` almost never holds.
fn reference_values(elem: &Type) -> &'static [&'static str] {
    match elem {
        Type::Path(path) if path.path.is_ident("str") => &["\"\"", "\"xyzzy\""],
        Type::Slice(_) => &["Default::default()"],
        _ => &["Box::leak(Box::new(Default::default()))"],
    }
}

/// The values of a named type: primitives only by their bare name (a path `u8` may be anything
/// else), the standard wrappers by their last segment whatever module they are named through.
fn path_values(path: &syn::Path) -> &'static [&'static str] {
    const INTEGERS: [&str; 6] = ["u8", "u16", "u32", "u64", "u128", "usize"];
    const SIGNED: [&str; 6] = ["i8", "i16", "i32", "i64", "i128", "isize"];
    let Some(last) = path.segments.last() else {
        return &["Default::default()"];
    };
    let name = last.ident.to_string();
    let bare = path.segments.len() == 1 && last.arguments.is_none();
    match name.as_str() {
        "bool" if bare => &["true", "false"],
        "char" if bare => &["'\\0'", "'x'"],
        "f32" | "f64" if bare => &["0.0", "1.0", "-1.0"],
        n if bare && INTEGERS.contains(&n) => &["0", "1"],
        n if bare && SIGNED.contains(&n) => &["0", "1", "-1"],
        "String" if last.arguments.is_none() => &["String::new()", "\"xyzzy\".into()"],
        "Vec" => &["vec![]", "vec![Default::default()]"],
        "Option" => &["None", "Some(Default::default())"],
        "Result" if first_type_arg_is_unit(&last.arguments) => &["Ok(())"],
        "Result" => &["Ok(Default::default())"],
        "Box" => &["Box::new(Default::default())"],
        _ => &["Default::default()"],
    }
}

/// Whether `<(), …>` (so `Result<(), E>` and `io::Result<()>` get `Ok(())`).
fn first_type_arg_is_unit(arguments: &syn::PathArguments) -> bool {
    let syn::PathArguments::AngleBracketed(args) = arguments else {
        return false;
    };
    let first = args.args.iter().find_map(|arg| match arg {
        syn::GenericArgument::Type(ty) => Some(ty),
        _ => None,
    });
    matches!(first, Some(Type::Tuple(tuple)) if tuple.elems.is_empty())
}

/// cargo-mutants 27.1.0's table of binary operator swaps (`visit.rs`, `visit_expr_binary`): no
/// `==` → `<=`, which goes wrong too easily on unsigned values compared with 0.
fn binary_swaps(op: &BinOp) -> &'static [&'static str] {
    match op {
        BinOp::Eq(_) => &["!="],
        BinOp::Ne(_) => &["=="],
        BinOp::And(_) => &["||"],
        BinOp::Or(_) => &["&&"],
        BinOp::Lt(_) => &["==", ">", "<="],
        BinOp::Gt(_) => &["==", "<", ">="],
        BinOp::Le(_) => &[">"],
        BinOp::Ge(_) => &["<"],
        BinOp::Add(_) => &["-", "*"],
        BinOp::AddAssign(_) => &["-=", "*="],
        BinOp::Sub(_) | BinOp::Mul(_) => &["+", "/"],
        BinOp::SubAssign(_) | BinOp::MulAssign(_) => &["+=", "/="],
        BinOp::Div(_) => &["%", "*"],
        BinOp::DivAssign(_) => &["%=", "*="],
        BinOp::Rem(_) => &["/", "+"],
        BinOp::RemAssign(_) => &["/=", "+="],
        BinOp::Shl(_) => &[">>"],
        BinOp::ShlAssign(_) => &[">>="],
        BinOp::Shr(_) => &["<<"],
        BinOp::ShrAssign(_) => &["<<="],
        BinOp::BitAnd(_) => &["|", "^"],
        BinOp::BitAndAssign(_) => &["|="],
        BinOp::BitOr(_) => &["&", "^"],
        BinOp::BitOrAssign(_) => &["&="],
        BinOp::BitXor(_) => &["|", "&"],
        BinOp::BitXorAssign(_) => &["|=", "&="],
        _ => &[],
    }
}

/// Whether attributes take their item out of mutation, as cargo-mutants decides: test code
/// (`#[test]`, `#[tokio::test]`, `#[cfg(test)]`) is what kills mutants, not what they live in,
/// and `#[mutants::skip]` (also under `cfg_attr`) is the user saying no.
fn excluded(attrs: &[Attribute]) -> bool {
    attrs.iter().any(|attr| {
        let path = attr.path();
        path.segments.last().is_some_and(|s| s.ident == "test")
            || is_path(path, &["mutants", "skip"])
            || (path.is_ident("cfg") && cfg_needs_test(attr))
            || (path.is_ident("cfg_attr") && cfg_attr_skips(attr))
    })
}

fn is_path(path: &syn::Path, idents: &[&str]) -> bool {
    path.segments.iter().map(|s| &s.ident).eq(idents.iter())
}

/// Whether a `#[cfg(…)]` mentions `test` outside a `not(…)`: such code is only built for tests.
fn cfg_needs_test(attr: &Attribute) -> bool {
    match &attr.meta {
        syn::Meta::List(list) => mentions_test(list.tokens.clone()),
        _ => false,
    }
}

fn mentions_test(tokens: TokenStream) -> bool {
    let mut negated = false;
    for tree in tokens {
        match tree {
            proc_macro2::TokenTree::Ident(ident) if ident == "test" => return true,
            proc_macro2::TokenTree::Ident(ident) => negated = ident == "not",
            proc_macro2::TokenTree::Group(group) if !negated => {
                if mentions_test(group.stream()) {
                    return true;
                }
            }
            _ => negated = false,
        }
    }
    false
}

/// Whether `#[cfg_attr(…, mutants::skip)]`.
fn cfg_attr_skips(attr: &Attribute) -> bool {
    let mut skip = false;
    let parsed = attr.parse_nested_meta(|meta| {
        skip |= is_path(&meta.path, &["mutants", "skip"]);
        if meta.input.peek(syn::token::Paren) {
            let _ = meta.input.parse::<proc_macro2::Group>()?;
        }
        Ok(())
    });
    parsed.is_ok() && skip
}

/// Why `cargo mutants --list --json` output could not become points.
#[derive(Debug, thiserror::Error)]
pub enum PointsError {
    #[error("cargo mutants --list --json output is not a list of mutants: {0}")]
    Json(#[from] serde_json::Error),
    #[error("cargo-mutants listed {0}, which is not a path inside the crate")]
    OutsideCrate(String),
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "{file}:{line}:{column} is not in the file (cargo-mutants read another version of it)"
    )]
    NotInFile {
        file: String,
        line: usize,
        column: usize,
    },
}

/// One entry of `cargo mutants --list --json`, as cargo-mutants 27.1.0 writes it: a JSON array
/// of objects
/// `{"diff", "file", "function": {"function_name", "return_type", "span"} | null, "genre",
/// "name", "package", "replacement", "span": {"start": {"line", "column"}, "end": {…}}}`, where
/// `diff` is there even without `--diff`, `function` is null outside functions,
/// `file` is relative to the tree's root with `/` separators, lines are 1-based, columns are
/// 1-based and count chars, `end` is exclusive, and `genre` is one of `FnValue` (the span covers
/// the body's statements, without the braces), `BinaryOperator`, `UnaryOperator` (replacement
/// empty), `MatchArm` (the arm deleted), `MatchArmGuard` (the guard replaced by `true` or
/// `false`) and `StructField` (a field and its comma deleted). Only what the points need is read.
#[derive(Deserialize)]
struct Listed {
    file: String,
    genre: String,
    replacement: String,
    span: ListedSpan,
}

#[derive(Deserialize)]
struct ListedSpan {
    start: ListedAt,
    end: ListedAt,
}

#[derive(Deserialize)]
struct ListedAt {
    line: usize,
    column: usize,
}

/// The points of `cargo mutants --list --json` output (cargo-mutants 27.1.0; see [`Listed`] for
/// the shape read), each with its file's path relative to `crate_root` as listed: `crate_root`
/// is where `cargo mutants` ran (a workspace's root for a workspace). The files are read to turn
/// line/char-column spans into byte offsets, so the tree must be the one the list was made from.
pub fn points_from_cargo_mutants(
    list_json: &str,
    crate_root: &Path,
) -> Result<Vec<(PathBuf, Point)>, PointsError> {
    listed_points(list_json, |file| {
        let path = crate_root.join(file);
        std::fs::read_to_string(&path).map_err(|source| PointsError::Read { path, source })
    })
}

/// [`points_from_cargo_mutants`] with the reading of a listed file left to `read`, each file
/// read once.
fn listed_points(
    list_json: &str,
    mut read: impl FnMut(&str) -> Result<String, PointsError>,
) -> Result<Vec<(PathBuf, Point)>, PointsError> {
    let listed: Vec<Listed> = serde_json::from_str(list_json)?;
    let mut files: HashMap<String, (String, LineStarts)> = HashMap::new();
    let mut out = Vec::with_capacity(listed.len());
    for entry in listed {
        if !inside_crate(&entry.file) {
            return Err(PointsError::OutsideCrate(entry.file));
        }
        let (text, lines) = match files.entry(entry.file.clone()) {
            Entry::Occupied(known) => known.into_mut(),
            Entry::Vacant(new) => {
                let text = read(&entry.file)?;
                let lines = LineStarts::new(&text);
                new.insert((text, lines))
            }
        };
        let point = listed_point(&entry, text, lines)?;
        out.push((PathBuf::from(&entry.file), point));
    }
    Ok(out)
}

/// Whether a listed path stays inside the crate (relative, no `..`), so reading it reads the
/// crate and nothing else.
fn inside_crate(file: &str) -> bool {
    let path = Path::new(file);
    !file.is_empty()
        && path
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
}

fn listed_point(entry: &Listed, text: &str, lines: &LineStarts) -> Result<Point, PointsError> {
    let offset = |at: &ListedAt| {
        let column = at.column.checked_sub(1);
        let position = column.map(|column| LineColumn {
            line: at.line,
            column,
        });
        let offset = position.and_then(|position| lines.offset(text, position));
        offset.ok_or_else(|| not_in_file(entry, at))
    };
    let (start, end) = (offset(&entry.span.start)?, offset(&entry.span.end)?);
    if end < start {
        return Err(not_in_file(entry, &entry.span.end));
    }
    let replacement = entry.replacement.clone();
    Ok(Point {
        line: line_of(text, start),
        start,
        end,
        operator: listed_operator(&entry.genre, &text[start..end], &replacement),
        replacement,
    })
}

fn not_in_file(entry: &Listed, at: &ListedAt) -> PointsError {
    PointsError::NotInFile {
        file: entry.file.clone(),
        line: at.line,
        column: at.column,
    }
}

/// A listed mutant's operator, named as [`points`] names its own.
fn listed_operator(genre: &str, original: &str, replacement: &str) -> String {
    match genre {
        "FnValue" => format!("body → {replacement}"),
        "BinaryOperator" => format!("{original} → {replacement}"),
        "UnaryOperator" => format!("delete {original}"),
        "MatchArm" => "delete match arm".to_string(),
        "MatchArmGuard" => format!("match guard → {replacement}"),
        "StructField" => "delete struct field".to_string(),
        other => format!("{other} → {replacement}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each point of `source` as `operator: mutated source`.
    fn mutants(source: &str) -> Vec<String> {
        let show = |p: Point| format!("{}: {}", p.operator, p.apply(source).unwrap_or_default());
        points(source).into_iter().map(show).collect()
    }

    fn operators(source: &str) -> Vec<String> {
        points(source).into_iter().map(|p| p.operator).collect()
    }

    #[test]
    fn add_gets_its_values_and_both_swaps_of_plus() {
        let source = "fn add(a: i32, b: i32) -> i32 { a + b }";
        let expected = [
            "body → 0: fn add(a: i32, b: i32) -> i32 { 0 }",
            "body → 1: fn add(a: i32, b: i32) -> i32 { 1 }",
            "body → -1: fn add(a: i32, b: i32) -> i32 { -1 }",
            "+ → -: fn add(a: i32, b: i32) -> i32 { a - b }",
            "+ → *: fn add(a: i32, b: i32) -> i32 { a * b }",
        ];
        assert_eq!(mutants(source), expected);
        let plus = &points(source)[3];
        assert_eq!((plus.line, plus.start, plus.end), (1, 34, 35));
    }

    #[test]
    fn a_bool_fn_gets_true_false_and_its_operators() {
        let source = "fn even(n: u32) -> bool { n % 2 == 0 }";
        let expected = [
            "body → true: fn even(n: u32) -> bool { true }",
            "body → false: fn even(n: u32) -> bool { false }",
            "% → /: fn even(n: u32) -> bool { n / 2 == 0 }",
            "% → +: fn even(n: u32) -> bool { n + 2 == 0 }",
            "== → !=: fn even(n: u32) -> bool { n % 2 != 0 }",
        ];
        assert_eq!(mutants(source), expected);
    }

    #[test]
    fn a_result_of_unit_gets_ok_unit_only() {
        let source = "fn check(x: u8) -> Result<(), E> {\n    if x > 3 {\n        return Err(E);\n    }\n    Ok(())\n}\n";
        let found = points(source);
        let expected = ["body → Ok(())", "> → ==", "> → <", "> → >="];
        assert_eq!(operators(source), expected);
        let body = (found[0].start, found[0].end, found[0].replacement.as_str());
        assert_eq!(body, (33, source.len() - 1, "{ Ok(()) }"));
        assert!(found[1..].iter().all(|p| p.line == 2));
    }

    #[test]
    fn a_string_fn_gets_empty_and_xyzzy_but_not_its_macro_arguments() {
        let source = "fn name() -> String { format!(\"{}\", 1 + 2) }";
        let expected = [
            "body → String::new(): fn name() -> String { String::new() }",
            "body → \"xyzzy\".into(): fn name() -> String { \"xyzzy\".into() }",
        ];
        assert_eq!(mutants(source), expected);
    }

    #[test]
    fn methods_in_an_impl_are_mutated() {
        let source = "impl C {\n    fn bump(&mut self) { self.n += 1; }\n    fn get(&self) -> &str { \"c\" }\n}\n";
        let found = mutants(source);
        let bump = "\n    fn bump(&mut self)";
        let get = "\n    fn get(&self) -> &str";
        let expected = [
            format!("body → (): impl C {{{bump} {{}}{get} {{ \"c\" }}\n}}\n"),
            format!("+= → -=: impl C {{{bump} {{ self.n -= 1; }}{get} {{ \"c\" }}\n}}\n"),
            format!("+= → *=: impl C {{{bump} {{ self.n *= 1; }}{get} {{ \"c\" }}\n}}\n"),
            format!("body → \"\": impl C {{{bump} {{ self.n += 1; }}{get} {{ \"\" }}\n}}\n"),
        ];
        assert_eq!(found[..4], expected);
        assert_eq!(found.len(), 5);
    }

    #[test]
    fn tests_const_fn_macros_constants_and_skipped_items_are_left_alone() {
        let source = r#"
const N: usize = 2 * 4;
static S: [u8; N + 1] = [0; N + 1];
enum K { A = 1 << 2 }
macro_rules! twice { ($e:expr) => { $e * 2 }; }
const fn double(x: u32) -> u32 { x * 2 }
#[mutants::skip]
fn skipped() -> u32 { 1 + 1 }
#[cfg_attr(test, mutants::skip)]
fn also_skipped() -> u32 { 1 + 1 }
unsafe fn raw() -> u32 { 1 + 1 }
fn shown() { println!("{}", 1 + 2); }
fn main() { let v: [u8; 3 - 1] = [0; 2]; let _ = Vec::<u8>::with_capacity(2 + 1); v.len() + 1; }
#[cfg(test)]
mod tests {
    fn helper() -> u32 { 1 + 1 }
    #[test]
    fn t() { assert!(1 + 1 == 2); }
}
#[test]
fn outside() { let _ = 1 + 1; }
"#;
        let expected = ["* → +", "* → /", "body → ()", "+ → -", "+ → *"];
        assert_eq!(operators(source), expected);
        let plus = points(source)[4].clone();
        assert_eq!((&source[plus.start..plus.end], plus.line), ("+", 13));
        assert!(source[..plus.start].ends_with("v.len() "));
    }

    #[test]
    fn drop_bodies_default_impls_and_already_returned_values_are_not_replaced() {
        let source = "impl Drop for D {\n    fn drop(&mut self) { self.0 -= 1; }\n}\nimpl Default for D {\n    fn default() -> Self { D(1 + 1) }\n}\nfn zero() -> i32 { 0 }\nfn it() -> impl Iterator<Item = u8> { None.into_iter() }\n";
        let expected = ["-= → +=", "-= → /=", "body → 1", "body → -1"];
        assert_eq!(operators(source), expected);
    }

    #[test]
    fn offsets_are_bytes_after_unicode_a_bom_and_crlf() {
        let source = "fn f() -> usize { let s = \"héllo → wörld\"; s.len() + 1 }";
        let minus = "+ → -: fn f() -> usize { let s = \"héllo → wörld\"; s.len() - 1 }";
        assert_eq!(mutants(source)[2], minus);
        let source = "\u{feff}fn g() -> bool {\r\n    let é = \"ü\"; !h(é)\r\n}\r\n";
        let not = &points(source)[2];
        assert_eq!(not.operator, "delete !");
        assert_eq!((&source[not.start..not.end], not.line), ("!", 2));
    }

    #[test]
    fn not_and_minus_are_deleted() {
        let source = "fn not(x: bool) -> bool { !x }\nfn neg(x: i8) -> i8 { -x }";
        let found = mutants(source);
        let not = "delete !: fn not(x: bool) -> bool { x }\nfn neg(x: i8) -> i8 { -x }";
        let neg = "delete -: fn not(x: bool) -> bool { !x }\nfn neg(x: i8) -> i8 { x }";
        assert_eq!((found[2].as_str(), found[6].as_str()), (not, neg));
        assert_eq!(found.len(), 7);
    }

    #[test]
    fn points_are_in_source_order_without_duplicates_and_none_for_bad_rust() {
        let source = "fn f(a: u8, b: u8) -> bool { (a < b) == !(a > b) && g(a + b) }";
        let found = points(source);
        let ordered = |w: &[Point]| w[0].start <= w[1].start && w[0] != w[1];
        assert!(found.windows(2).all(ordered));
        assert_eq!(found.len(), 2 + 1 + 3 + 1 + 3 + 1 + 2);
        assert!(points("fn broken( {").is_empty());
    }

    #[test]
    fn return_types_get_cargo_mutants_values() {
        let values = |ty: &str| match syn::parse_str::<ReturnType>(ty) {
            Ok(output) => return_values(&output).join(", "),
            Err(e) => panic!("{ty}: {e}"),
        };
        let cases = [
            ("-> Option<u8>", "None, Some(Default::default())"),
            ("-> Vec<String>", "vec![], vec![Default::default()]"),
            ("-> io::Result<()>", "Ok(())"),
            ("-> Result<u8, E>", "Ok(Default::default())"),
            ("-> Box<T>", "Box::new(Default::default())"),
            ("-> char", "'\\0', 'x'"),
            ("-> f64", "0.0, 1.0, -1.0"),
            ("-> &'a T", "Box::leak(Box::new(Default::default()))"),
            ("-> &[u8]", "Default::default()"),
            ("-> Self", "Default::default()"),
            ("-> impl Fn()", ""),
            ("-> !", ""),
        ];
        for (ty, expected) in cases {
            assert_eq!(values(ty), expected, "{ty}");
        }
    }

    /// The source cargo-mutants 27.1.0 listed, and three entries of its
    /// `cargo mutants --list --json`, verbatim.
    const CAPTURED_SOURCE: &str = "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\npub fn loud(s: &str) -> bool {\n    let arrow = \"→→\"; !s.is_empty() && arrow.len() > 1\n}\n";
    const CAPTURED_LIST: &str = r#"[
{"diff": "--- src/lib.rs\n+++ replace add -> i32 with -1\n@@ -1,7 +1,7 @@\n pub fn add(a: i32, b: i32) -> i32 {\n-    a + b\n+    -1 /* ~ changed by cargo-mutants ~ */\n }\n \n pub fn loud(s: &str) -> bool {\n     let arrow = \"→→\"; !s.is_empty() && arrow.len() > 1\n }\n", "file": "src/lib.rs", "function": {"function_name": "add", "return_type": "-> i32", "span": {"end": {"column": 2, "line": 3}, "start": {"column": 1, "line": 1}}}, "genre": "FnValue", "name": "src/lib.rs:2:5: replace add -> i32 with -1", "package": "capture", "replacement": "-1", "span": {"end": {"column": 10, "line": 2}, "start": {"column": 5, "line": 2}}},
{"diff": "--- src/lib.rs\n+++ delete ! in loud\n@@ -1,7 +1,7 @@\n pub fn add(a: i32, b: i32) -> i32 {\n     a + b\n }\n \n pub fn loud(s: &str) -> bool {\n-    let arrow = \"→→\"; !s.is_empty() && arrow.len() > 1\n+    let arrow = \"→→\";  /* ~ changed by cargo-mutants ~ */s.is_empty() && arrow.len() > 1\n }\n", "file": "src/lib.rs", "function": {"function_name": "loud", "return_type": "-> bool", "span": {"end": {"column": 2, "line": 7}, "start": {"column": 1, "line": 5}}}, "genre": "UnaryOperator", "name": "src/lib.rs:6:23: delete ! in loud", "package": "capture", "replacement": "", "span": {"end": {"column": 24, "line": 6}, "start": {"column": 23, "line": 6}}},
{"diff": "--- src/lib.rs\n+++ replace > with >= in loud\n@@ -1,7 +1,7 @@\n pub fn add(a: i32, b: i32) -> i32 {\n     a + b\n }\n \n pub fn loud(s: &str) -> bool {\n-    let arrow = \"→→\"; !s.is_empty() && arrow.len() > 1\n+    let arrow = \"→→\"; !s.is_empty() && arrow.len() >= /* ~ changed by cargo-mutants ~ */ 1\n }\n", "file": "src/lib.rs", "function": {"function_name": "loud", "return_type": "-> bool", "span": {"end": {"column": 2, "line": 7}, "start": {"column": 1, "line": 5}}}, "genre": "BinaryOperator", "name": "src/lib.rs:6:52: replace > with >= in loud", "package": "capture", "replacement": ">=", "span": {"end": {"column": 53, "line": 6}, "start": {"column": 52, "line": 6}}}
]"#;

    #[test]
    fn cargo_mutants_list_becomes_byte_offset_points() {
        let mut reads = 0;
        let listed = listed_points(CAPTURED_LIST, |file| {
            reads += 1;
            assert_eq!(file, "src/lib.rs");
            Ok(CAPTURED_SOURCE.to_string())
        });
        let listed = listed.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(reads, 1);
        let source = CAPTURED_SOURCE;
        let texts: Vec<_> = listed
            .iter()
            .map(|(_, p)| &source[p.start..p.end])
            .collect();
        assert_eq!(texts, ["a + b", "!", ">"]);
        let ops: Vec<_> = listed.iter().map(|(_, p)| p.operator.as_str()).collect();
        assert_eq!(ops, ["body → -1", "delete !", "> → >="]);
        assert_eq!(listed[2].0, PathBuf::from("src/lib.rs"));
        assert_eq!((listed[0].1.line, listed[2].1.line), (2, 6));
        // Our own points for the same operators sit on the same bytes.
        let ours = points(source);
        assert!(listed[1..].iter().all(|(_, theirs)| ours.contains(theirs)));
    }

    #[test]
    fn cargo_mutants_list_problems_are_named() {
        let entry = |file: &str, line: usize| {
            format!(
                r#"[{{"file": "{file}", "genre": "FnValue", "replacement": "0", "span": {{"start": {{"line": {line}, "column": 1}}, "end": {{"line": {line}, "column": 2}}}}}}]"#
            )
        };
        let read = |_: &str| Ok("fn f() {}\n".to_string());
        let outside = listed_points(&entry("../x.rs", 1), read);
        assert!(matches!(outside, Err(PointsError::OutsideCrate(f)) if f == "../x.rs"));
        let past = listed_points(&entry("src/lib.rs", 9), read);
        assert!(matches!(past, Err(PointsError::NotInFile { line: 9, .. })));
        assert!(matches!(
            listed_points("{}", read),
            Err(PointsError::Json(_))
        ));
        let missing =
            points_from_cargo_mutants(&entry("src/lib.rs", 1), Path::new("/nonexistent/crate"));
        assert!(matches!(missing, Err(PointsError::Read { .. })));
    }
}
