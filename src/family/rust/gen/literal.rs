//! A call's observed `{:?}` text turned back into Rust source that builds an equal value, so a
//! generated test can pin what the call returned: `assert_eq!(value, <literal>)`.
//!
//! The literal has to compile as the right side of `assert_eq!`, which compares through
//! `PartialEq<Rhs>` with `Rhs` inferred from the literal alone: no coercion reaches it. Inference
//! still fills holes (`None`, `vec![]`) through a type whose only `PartialEq` impl is with itself
//! (`Option`, tuples, `Result`, `Box`, maps, derived impls), but not through `Vec`, slices,
//! arrays, references or `String`, which compare with several types (`Vec<String> ==
//! Vec<&str>` compiles; `Option<String> == Option<&str>` does not). [`Ctx`] tracks which kind
//! of position a part is rendered in.

use super::model::{Api, Field, TypeKind};
use super::ty::Ty;

/// A value as Rust's derived/std `{:?}` prints it.
#[derive(Debug, Clone, PartialEq)]
pub enum DebugValue {
    /// Digits as printed, sign included: `-3`, `18446744073709551615`.
    Int(String),
    /// As printed: `1.5`, `-0.0`, `1e-7`, `NaN`, `inf`, `-inf`.
    Float(String),
    /// The literal exactly as printed, quotes and escapes included: `"a\nb"`.
    Str(String),
    /// The literal exactly as printed: `'a'`, `'\''`.
    Char(String),
    Bool(bool),
    /// `[a, b]`
    Seq(Vec<DebugValue>),
    /// `(a, b)`, `(a,)`, `()`.
    Tuple(Vec<DebugValue>),
    /// `Name { a: 1 }`
    Struct(String, Vec<(String, DebugValue)>),
    /// `Name(1, 2)`, also `Some(..)`, `Ok(..)`, `Err(..)`.
    TupleStruct(String, Vec<DebugValue>),
    /// `None`, `Name`.
    Unit(String),
    /// `{k: v}` (an empty `{}` is read as a map).
    Map(Vec<(DebugValue, DebugValue)>),
    /// `{a, b}`
    Set(Vec<DebugValue>),
}

/// Reads a `{:?}` text. The whole input must be a value (whitespace aside, so `{:#?}` reads
/// too); anything a literal cannot be made of (addresses, closures, `..` of non-exhaustive
/// output, `<...>` placeholders, units like `1.5s`) gives None.
pub fn parse(text: &str) -> Option<DebugValue> {
    let mut p = Parser {
        s: text.chars().collect(),
        pos: 0,
        depth: 0,
    };
    let value = p.value()?;
    p.ws();
    (p.pos == p.s.len()).then_some(value)
}

/// How deep values may nest: deeper output is refused rather than risking the stack.
const MAX_DEPTH: usize = 128;

struct Parser {
    s: Vec<char>,
    pos: usize,
    depth: usize,
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.s.get(self.pos).copied()
    }

    fn ws(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.pos += 1;
        }
    }

    /// Skips whitespace, then takes `c` if it comes next.
    fn eat(&mut self, c: char) -> bool {
        self.ws();
        let hit = self.peek() == Some(c);
        if hit {
            self.pos += 1;
        }
        hit
    }

    fn value(&mut self) -> Option<DebugValue> {
        self.ws();
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return None;
        }
        let value = match self.peek()? {
            '"' => DebugValue::Str(self.quoted('"')?),
            '\'' => DebugValue::Char(self.quoted('\'')?),
            '[' => {
                self.pos += 1;
                DebugValue::Seq(self.list(']')?.0)
            }
            '(' => {
                self.pos += 1;
                let (items, trailing) = self.list(')')?;
                // `(x)` is no tuple: Debug prints a 1-tuple as `(x,)`.
                if items.len() == 1 && !trailing {
                    return None;
                }
                DebugValue::Tuple(items)
            }
            '{' => {
                self.pos += 1;
                self.map_or_set()?
            }
            c if c == '-' || c.is_ascii_digit() => self.number()?,
            c if c.is_alphabetic() || c == '_' => self.named()?,
            _ => return None,
        };
        self.depth -= 1;
        Some(value)
    }

    /// Comma-separated items read by `item` up to `close` (the opening one taken), and
    /// whether a comma came last.
    fn items<T>(
        &mut self,
        close: char,
        mut item: impl FnMut(&mut Self) -> Option<T>,
    ) -> Option<(Vec<T>, bool)> {
        let mut items = Vec::new();
        loop {
            if self.eat(close) {
                return Some((items, true));
            }
            items.push(item(self)?);
            if self.eat(close) {
                return Some((items, false));
            }
            if !self.eat(',') {
                return None;
            }
        }
    }

    fn list(&mut self, close: char) -> Option<(Vec<DebugValue>, bool)> {
        self.items(close, Self::value)
    }

    /// `{k: v, …}` or `{a, …}`, the `{` taken.
    fn map_or_set(&mut self) -> Option<DebugValue> {
        let entry = |p: &mut Self| {
            let key = p.value()?;
            Some((key, if p.eat(':') { Some(p.value()?) } else { None }))
        };
        let (entries, _) = self.items('}', entry)?;
        if entries.iter().all(|(_, v)| v.is_some()) {
            let pairs = entries.into_iter().map(|(k, v)| v.map(|v| (k, v)));
            Some(DebugValue::Map(pairs.collect::<Option<_>>()?))
        } else {
            let keys = entries.into_iter().map(|(k, v)| v.is_none().then_some(k));
            Some(DebugValue::Set(keys.collect::<Option<_>>()?))
        }
    }

    fn ident(&mut self) -> Option<String> {
        self.ws();
        let start = self.pos;
        if self.s[self.pos..].starts_with(&['r', '#']) {
            self.pos += 2;
        }
        let first = self.pos;
        while self.peek().is_some_and(|c| c.is_alphanumeric() || c == '_') {
            self.pos += 1;
        }
        let ok = self.pos > first && !self.s[first].is_ascii_digit();
        ok.then(|| self.s[start..self.pos].iter().collect())
    }

    fn named(&mut self) -> Option<DebugValue> {
        let name = self.ident()?;
        match name.as_str() {
            "true" => return Some(DebugValue::Bool(true)),
            "false" => return Some(DebugValue::Bool(false)),
            "NaN" | "inf" => return Some(DebugValue::Float(name)),
            _ => {}
        }
        if self.eat('(') {
            return Some(DebugValue::TupleStruct(name, self.list(')')?.0));
        }
        if !self.eat('{') {
            return Some(DebugValue::Unit(name));
        }
        let field = |p: &mut Self| {
            let name = p.ident()?;
            p.eat(':').then_some(())?;
            Some((name, p.value()?))
        };
        let (fields, _) = self.items('}', field)?;
        Some(DebugValue::Struct(name, fields))
    }

    fn digits(&mut self) -> usize {
        let start = self.pos;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
        }
        self.pos - start
    }

    fn number(&mut self) -> Option<DebugValue> {
        let start = self.pos;
        if self.peek() == Some('-') {
            self.pos += 1;
            if self.s[self.pos..].starts_with(&['i', 'n', 'f']) {
                self.pos += 3;
                return self.word_ends().then(|| DebugValue::Float("-inf".into()));
            }
        }
        if self.digits() == 0 {
            return None;
        }
        let mut float = false;
        if self.peek() == Some('.') && self.s.get(self.pos + 1).is_some_and(char::is_ascii_digit) {
            self.pos += 1;
            self.digits();
            float = true;
        }
        if matches!(self.peek(), Some('e' | 'E')) {
            self.pos += 1;
            if matches!(self.peek(), Some('-' | '+')) {
                self.pos += 1;
            }
            if self.digits() == 0 {
                return None;
            }
            float = true;
        }
        if !self.word_ends() {
            return None;
        }
        let kind = if float {
            DebugValue::Float
        } else {
            DebugValue::Int
        };
        Some(kind(self.s[start..self.pos].iter().collect()))
    }

    /// No letter, digit or `_` glued on (`0x7f`, `1.5s`, `3usize`).
    fn word_ends(&self) -> bool {
        !self.peek().is_some_and(|c| c.is_alphanumeric() || c == '_')
    }

    /// A `"…"` or `'…'` literal (`q` its quote), verbatim; a char literal holds one
    /// character or escape.
    fn quoted(&mut self, q: char) -> Option<String> {
        let start = self.pos;
        self.pos += 1;
        let mut count = 0;
        loop {
            match self.peek()? {
                c if c == q => break,
                '\\' => self.escape()?,
                // A bare carriage return is not allowed in a Rust string literal.
                '\r' => return None,
                '\n' | '\t' if q == '\'' => return None,
                _ => self.pos += 1,
            }
            count += 1;
        }
        self.pos += 1;
        (q == '"' || count == 1).then(|| self.s[start..self.pos].iter().collect())
    }

    /// An escape Rust's literals accept (`\n`, `\u{1f600}`, `\x7f`, …), the `\` at `pos`.
    fn escape(&mut self) -> Option<()> {
        self.pos += 1;
        let c = self.peek()?;
        self.pos += 1;
        let (digits, max) = match c {
            'n' | 'r' | 't' | '\\' | '0' | '\'' | '"' => return Some(()),
            'x' => (self.s.get(self.pos..self.pos + 2)?.to_vec(), 0x7f),
            'u' if self.peek() == Some('{') => {
                let close = self.s[self.pos..].iter().position(|c| *c == '}')?;
                let digits = self.s[self.pos + 1..self.pos + close].to_vec();
                self.pos += 2;
                (digits, 0x10ffff)
            }
            _ => return None,
        };
        self.pos += digits.len();
        let hex: String = digits.iter().collect();
        let ok = (1..=6).contains(&hex.len()) && digits.iter().all(char::is_ascii_hexdigit);
        let code = u32::from_str_radix(&hex, 16).ok().filter(|_| ok)?;
        (code <= max && char::from_u32(code).is_some()).then_some(())
    }
}

/// Where a part of the literal sits, which decides what it may leave to inference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ctx {
    /// The right side of `assert_eq!` itself.
    Top,
    /// Compared through a `PartialEq<U>` that does not pin `U` (an element of a top-level
    /// `Vec`, slice or array, the target of a top-level reference): `"a"` may stand for a
    /// `String`, and a hole is only filled when its type has a single `PartialEq` impl — or,
    /// for an empty sequence, when a non-empty sibling (`true`) gives the common type.
    Loose(bool),
    /// The type is pinned (inside `Option`, tuples, `Result`, `Box`, maps, fields): the part
    /// must have exactly its type, and holes are filled.
    Exact,
}

/// Rust source of a value of type `ty` equal to `value`, for `assert_eq!(actual, SOURCE)`
/// where `actual: ty`. `top`: it is the right side of `assert_eq!` itself (not nested in a
/// container). None when no literal compiles and compares equal (NaN, an empty collection at
/// the top, a type the crate does not let callers build, …).
pub fn literal(ty: &Ty, value: &DebugValue, api: &Api, top: bool) -> Option<String> {
    let ctx = if top { Ctx::Top } else { Ctx::Exact };
    render(ty, value, api, ctx)
}

fn render(ty: &Ty, value: &DebugValue, api: &Api, ctx: Ctx) -> Option<String> {
    use DebugValue as V;
    let exact = |t: &Ty, v: &DebugValue| render(t, v, api, Ctx::Exact);
    match (ty, value) {
        (Ty::Unit, V::Tuple(items)) if items.is_empty() => Some("()".into()),
        (Ty::Bool, V::Bool(b)) => Some(b.to_string()),
        (Ty::Char, V::Char(c)) => Some(c.clone()),
        (Ty::Int(_), V::Int(digits)) => Some(digits.clone()),
        (Ty::Float(kind), V::Float(text) | V::Int(text)) => float(kind, text),
        (Ty::String, V::Str(lit)) if ctx == Ctx::Exact => Some(format!("String::from({lit})")),
        (Ty::String, V::Str(lit)) => Some(lit.clone()),
        (Ty::Vec(t), V::Seq(items)) => {
            let body = elements(t, items, api, ctx)?;
            Some(format!("vec![{body}]"))
        }
        (Ty::Array(t, n), V::Seq(items)) if items.len() == *n => {
            let body = elements(t, items, api, ctx)?;
            Some(format!("[{body}]"))
        }
        (Ty::Option(_), V::Unit(name)) if name == "None" => Some("None".into()),
        (Ty::Option(t), V::TupleStruct(name, items)) if name == "Some" && items.len() == 1 => {
            Some(format!("Some({})", exact(t, &items[0])?))
        }
        (Ty::Result(t, e), V::TupleStruct(name, items)) if items.len() == 1 => {
            match name.as_str() {
                "Ok" => Some(format!("Ok({})", exact(t, &items[0])?)),
                "Err" => Some(format!("Err({})", exact(e, &items[0])?)),
                _ => None,
            }
        }
        (Ty::Tuple(ts), V::Tuple(items)) if ts.len() == items.len() && !ts.is_empty() => {
            let parts = join(ts.iter().zip(items).map(|(t, v)| exact(t, v)))?;
            let comma = if ts.len() == 1 { "," } else { "" };
            Some(format!("({parts}{comma})"))
        }
        (Ty::Map(kind, k, v), V::Map(entries)) => map(kind, k, v, entries, api, ctx),
        (Ty::Box(t), _) => boxed(t, value, api),
        (Ty::Ref(t, mutable), _) => reference(t, *mutable, value, api, ctx),
        (Ty::Named(name, args), _) => named(name, args, value, api),
        _ => None,
    }
}

/// The parts joined by `, `, if every part has a literal.
fn join(parts: impl Iterator<Item = Option<String>>) -> Option<String> {
    Some(parts.collect::<Option<Vec<_>>>()?.join(", "))
}

/// A float literal: Debug prints finite floats as literals already (`5.0`, `1e16`, `-0.0`);
/// infinities are spelled by constant; NaN equals nothing.
fn float(kind: &str, text: &str) -> Option<String> {
    match text {
        "inf" => Some(format!("{kind}::INFINITY")),
        "-inf" => Some(format!("{kind}::NEG_INFINITY")),
        t if t.contains("NaN") || t.contains("inf") => None,
        t if t.contains(['.', 'e', 'E']) => Some(t.to_string()),
        t => Some(format!("{t}.0")),
    }
}

/// Whether an empty collection of `elem` may stand at `ctx`: at the top `vec![]` leaves its
/// element type to an impl that does not pin it (the caller asserts emptiness instead); in a
/// loose position the hole is filled only when the element has a single `PartialEq` impl.
fn empty_allowed(elem: &Ty, ctx: Ctx) -> bool {
    match ctx {
        Ctx::Top => false,
        Ctx::Loose(sibling) => {
            elem.is_closed()
                && (sibling || matches!(elem, Ty::Int(_) | Ty::Float(_) | Ty::Bool | Ty::Char))
        }
        Ctx::Exact => elem.is_closed(),
    }
}

/// The elements of a `Vec`, slice or array at `ctx`, joined by `, `.
fn elements(elem: &Ty, items: &[DebugValue], api: &Api, ctx: Ctx) -> Option<String> {
    if items.is_empty() && !empty_allowed(elem, ctx) {
        return None;
    }
    // `vec![vec![], vec!["a"]]`: the empty one takes its type from the other.
    let sibling = |v: &DebugValue| matches!(v, DebugValue::Seq(x) if !x.is_empty());
    let inner = match ctx {
        Ctx::Exact => Ctx::Exact,
        _ => Ctx::Loose(items.iter().any(sibling)),
    };
    join(items.iter().map(|v| render(elem, v, api, inner)))
}

fn map(
    kind: &str,
    k: &Ty,
    v: &Ty,
    entries: &[(DebugValue, DebugValue)],
    api: &Api,
    ctx: Ctx,
) -> Option<String> {
    if entries.is_empty() {
        let ok = ctx != Ctx::Top && k.is_closed() && v.is_closed();
        return ok.then(|| format!("std::collections::{kind}::new()"));
    }
    let pairs = join(entries.iter().map(|(key, value)| {
        let key = render(k, key, api, Ctx::Exact)?;
        let value = render(v, value, api, Ctx::Exact)?;
        Some(format!("({key}, {value})"))
    }))?;
    Some(format!("std::collections::{kind}::from([{pairs}])"))
}

/// `Box<T>` compares only with itself, so what it holds is pinned.
fn boxed(t: &Ty, value: &DebugValue, api: &Api) -> Option<String> {
    match (t, value) {
        (Ty::Str, DebugValue::Str(lit)) => Some(format!("Box::<str>::from({lit})")),
        (Ty::Slice(elem), DebugValue::Seq(items)) => Some(format!(
            "vec![{}].into_boxed_slice()",
            elements(elem, items, api, Ctx::Exact)?
        )),
        _ => Some(format!("Box::new({})", render(t, value, api, Ctx::Exact)?)),
    }
}

/// `&A == &B` holds through `A: PartialEq<B>`, so behind a reference at the top the target is
/// loose; once pinned, the reference must be built exactly (`&mut` too).
fn reference(t: &Ty, mutable: bool, value: &DebugValue, api: &Api, ctx: Ctx) -> Option<String> {
    let pinned = ctx == Ctx::Exact;
    match (t, value) {
        // A string literal is a `&str`; `&String == &str` compiles too.
        (Ty::Str | Ty::String, DebugValue::Str(lit)) if !pinned => Some(lit.clone()),
        (Ty::Str, DebugValue::Str(lit)) if !mutable => Some(lit.clone()),
        (Ty::Str, _) => None,
        // `&[T] == [U; N]` compiles; elsewhere the array is cut to a slice so every element
        // (and the pinned type) has the same type whatever its length.
        (Ty::Slice(elem), DebugValue::Seq(items)) if ctx == Ctx::Top => {
            Some(format!("[{}]", elements(elem, items, api, Ctx::Top)?))
        }
        (Ty::Slice(_), _) if pinned && mutable => None,
        (Ty::Slice(elem), DebugValue::Seq(items)) => {
            Some(format!("&[{}][..]", elements(elem, items, api, ctx)?))
        }
        (Ty::Slice(_), _) => None,
        _ if pinned => {
            let amp = if mutable { "&mut " } else { "&" };
            Some(format!("{amp}{}", render(t, value, api, Ctx::Exact)?))
        }
        _ if ctx == Ctx::Top => Some(format!("&{}", render(t, value, api, Ctx::Loose(false))?)),
        _ => Some(format!("&{}", render(t, value, api, ctx)?)),
    }
}

/// A literal of a type of the crate: only when callers outside it may build one (public
/// fields, not `#[non_exhaustive]`) and it compares by `PartialEq`.
fn named(name: &str, args: &[Ty], value: &DebugValue, api: &Api) -> Option<String> {
    let decl = api.ty(name)?;
    if decl.non_exhaustive || !decl.traits.contains("PartialEq") {
        return None;
    }
    let params: Vec<&str> = decl
        .generics
        .iter()
        .map(|(n, _)| n.as_str())
        .filter(|n| !n.starts_with('\''))
        .collect();
    let self_ty = Ty::Named(name.to_string(), args.to_vec());
    // A field's type with the arguments put in; a parameter left open has no literal.
    let field_ty = |t: &Ty| -> Option<Ty> {
        let lookup = |p: &str| -> Option<Ty> {
            let i = params.iter().position(|q| *q == p)?;
            Some(if params.len() == args.len() {
                args[i].clone()
            } else {
                Ty::Param(p.to_string())
            })
        };
        let t = t.substitute(&self_ty, &lookup);
        t.is_closed().then_some(t)
    };
    let (label, fields, tuple, path) = match &decl.kind {
        TypeKind::Struct { fields, tuple } if fields.iter().all(|f| f.public) => {
            (&decl.name, fields, *tuple, decl.path.clone())
        }
        TypeKind::Enum { variants } => {
            let (DebugValue::Unit(v) | DebugValue::TupleStruct(v, _) | DebugValue::Struct(v, _)) =
                value
            else {
                return None;
            };
            let variant = variants.iter().find(|x| x.name == *v)?;
            let path = format!("{}::{v}", decl.path);
            (&variant.name, &variant.fields, variant.tuple, path)
        }
        _ => return None,
    };
    let body = body(label, fields, tuple, value, api, &field_ty)?;
    Some(format!("{path}{body}"))
}

/// What follows a struct's or variant's path: ``, `()`, `(x, y)`, ` { a: x }`, ` {}`. The
/// value must have the shape and the fields the declaration has, in its order.
fn body(
    name: &str,
    fields: &[Field],
    tuple: bool,
    value: &DebugValue,
    api: &Api,
    field_ty: &dyn Fn(&Ty) -> Option<Ty>,
) -> Option<String> {
    let field = |f: &Field, v: &DebugValue| render(&field_ty(&f.ty)?, v, api, Ctx::Exact);
    match value {
        // Debug prints `V()` and `V {}` as `V` too.
        DebugValue::Unit(n) if n == name && fields.is_empty() => {
            Some(if tuple { "()" } else { "" }.to_string())
        }
        DebugValue::TupleStruct(n, items) if n == name && tuple && items.len() == fields.len() => {
            let parts = join(fields.iter().zip(items).map(|(f, v)| field(f, v)))?;
            Some(format!("({parts})"))
        }
        DebugValue::Struct(n, items) if n == name && !tuple && items.len() == fields.len() => {
            if items.is_empty() {
                return Some(" {}".into());
            }
            // Derived Debug prints a raw field name without its `r#`.
            let bare = |s: &str| s.trim_start_matches("r#").to_string();
            let parts = join(fields.iter().zip(items).map(|(f, (debug_name, v))| {
                let declared = f.name.as_deref()?;
                let same = bare(declared) == bare(debug_name);
                Some(format!("{declared}: {}", same.then(|| field(f, v))??))
            }))?;
            Some(format!(" {{ {parts} }}"))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet, HashMap};

    use super::*;
    use crate::family::rust::gen::model::{TypeDecl, Variant};

    #[derive(Debug, PartialEq)]
    struct Point {
        x: i32,
        label: String,
        tags: Vec<Option<String>>,
    }

    #[derive(Debug)]
    #[allow(dead_code)]
    enum Shape {
        Empty,
        Circle(f64),
        Rect { w: u32, h: u32 },
        Wrapped(Box<Shape>),
    }

    fn ty(src: &str) -> Ty {
        Ty::of(&syn::parse_str::<syn::Type>(src).unwrap())
    }

    /// Prints a parsed value back the way `{:?}` does.
    fn show(v: &DebugValue) -> String {
        use DebugValue as V;
        let commas = |items: Vec<String>| items.join(", ");
        let list = |items: &[V]| commas(items.iter().map(show).collect());
        match v {
            V::Int(s) | V::Float(s) | V::Str(s) | V::Char(s) | V::Unit(s) => s.clone(),
            V::Bool(b) => b.to_string(),
            V::Seq(items) => format!("[{}]", list(items)),
            V::Tuple(items) if items.len() == 1 => format!("({},)", list(items)),
            V::Tuple(items) => format!("({})", list(items)),
            V::TupleStruct(n, items) => format!("{n}({})", list(items)),
            V::Set(items) => format!("{{{}}}", list(items)),
            V::Struct(n, f) => {
                let fields = f.iter().map(|(k, v)| format!("{k}: {}", show(v)));
                format!("{n} {{ {} }}", commas(fields.collect()))
            }
            V::Map(e) => {
                let entries = e.iter().map(|(k, v)| format!("{}: {}", show(k), show(v)));
                format!("{{{}}}", commas(entries.collect()))
            }
        }
    }

    #[test]
    fn std_debug_output_reads_back() {
        let strings = [Some("a\"b\n\t\\"), None, Some("é\u{301}\u{0}\u{7f}'")];
        let point = Point {
            x: -1,
            label: "p".into(),
            tags: vec![None],
        };
        let shapes = [Shape::Empty, Shape::Circle(1.5), Shape::Rect { w: 1, h: 2 }];
        let wrapped: Result<i64, Shape> = Err(Shape::Wrapped(Box::new(Shape::Empty)));
        for text in [
            format!("{:?}", vec![strings.map(|s| s.map(String::from))]),
            format!("{:?}", [0.1, -0.0, 1e16, 1e-7, 5e-324, 5.0]),
            format!("{:?}", (f64::MAX, f64::MIN_POSITIVE)),
            format!("{:?}", [f64::INFINITY, f64::NEG_INFINITY, f64::NAN]),
            format!("{:?}", (1u8, 'x', '\'', '\u{301}', true, "s", (), (2,))),
            format!("{:?}", (i128::MIN, u64::MAX, -3i8)),
            format!("{:?}", HashMap::from([("k", vec![1, 2])])),
            format!("{:?}", (BTreeSet::from([1, 2]), BTreeMap::<u8, u8>::new())),
            format!("{point:?}"),
            format!("{shapes:?}"),
            format!("{wrapped:?}"),
            format!("{:?}", Some(Ok::<u8, ()>(1))),
        ] {
            let value = parse(&text).unwrap_or_else(|| panic!("no parse: {text}"));
            assert_eq!(show(&value), text);
        }
        // Pretty output reads as the same value.
        let pretty = format!("({shapes:#?}, {point:#?}, {:#?})", (1,));
        assert_eq!(
            parse(&pretty),
            parse(&format!("({shapes:?}, {point:?}, (1,))"))
        );
    }

    #[test]
    fn parse_gives_the_parts() {
        for row in [
            r#" -3  => Int("-3")"#,
            r#"-inf => Float("-inf")"#,
            r#"1e-7 => Float("1e-7")"#,
            r#""a\"\x41\u{1F600}" => Str("\"a\\\"\\x41\\u{1F600}\"")"#,
            r#"P { r#type: () } => Struct("P", [("r#type", Tuple([]))])"#,
            r#"{1, 2} => Set([Int("1"), Int("2")])"#,
            "{} => Map([])",
        ] {
            let (text, parts) = row.split_once(" => ").unwrap();
            assert_eq!(format!("{:?}", parse(text).unwrap()), parts, "{text}");
        }
    }

    #[test]
    fn output_no_literal_can_be_made_of_is_refused() {
        let refused = r#"0x7ffee4c0
            Point { x: 1, .. }
            <closure>
            Mutex { data: <locked> }
            [1, 2
            [1,, 2]
            1.5s
            (1)
            "open
            "\q"
            'ab'
            ''
            Foo::Bar
            1..5
            {1: 2, 3}
            1 2
            3usize
            "\u{110000}"
            "\u{+41}"
            "\x80""#;
        for text in refused.lines().chain(["", &"[".repeat(500)]) {
            assert_eq!(parse(text), None, "{text}");
        }
    }

    /// Fields from `name: Type; …` (a tuple's: `Type; …`).
    fn fields(spec: &str) -> Vec<Field> {
        let field = |f: &str| {
            let (name, ty) = match f.split_once(": ") {
                Some((n, t)) => (Some(n.trim().to_string()), ty(t)),
                None => (None, ty(f)),
            };
            let public = true;
            Field { name, ty, public }
        };
        spec.split(';')
            .filter(|f| !f.trim().is_empty())
            .map(field)
            .collect()
    }

    fn api() -> Api {
        let decl = |name: &str, kind| TypeDecl {
            name: name.into(),
            path: format!("my_crate::{name}"),
            file: "src/lib.rs".into(),
            kind,
            generics: vec![],
            traits: ["Debug", "PartialEq"].map(String::from).into(),
            non_exhaustive: false,
        };
        let strukt = |name, spec, tuple| {
            let fields = fields(spec);
            decl(name, TypeKind::Struct { fields, tuple })
        };
        let variant = |name: &str, spec, tuple| {
            let (name, fields) = (name.into(), fields(spec));
            Variant {
                name,
                fields,
                tuple,
            }
        };
        let variants = vec![
            variant("Empty", "", false),
            variant("Circle", "f64", true),
            variant("Rect", "w: u32; h: u32", false),
            variant("Wrapped", "Box<Shape>", true),
        ];
        let mut types = vec![
            strukt(
                "Point",
                "x: i32; label: String; tags: Vec<Option<String>>",
                false,
            ),
            strukt("Id", "u64", true),
            strukt("Marker", "", false),
            strukt("Wrapper", "inner: T", false),
            strukt("NoEq", "a: u8", false),
            strukt("Hidden", "a: u8", false),
            strukt("Open", "a: u8", false),
            decl("Shape", TypeKind::Enum { variants }),
        ];
        types[3].generics = vec![("'a".into(), vec![]), ("T".into(), vec![])];
        types[4].traits.remove("PartialEq");
        if let TypeKind::Struct { fields, .. } = &mut types[5].kind {
            fields[0].public = false;
        }
        types[6].non_exhaustive = true;
        let types = types.into_iter().map(|d| (d.name.clone(), d)).collect();
        let crate_name = "my_crate".into();
        Api {
            crate_name,
            types,
            ..Api::default()
        }
    }

    /// Checks `type | {:?} text | literal` rows (`-`: none) at the top or nested; every
    /// literal made is an expression Rust parses. (Each literal here was also compiled and
    /// run against a value of its type in a scratch program.)
    fn check(top: bool, rows: &[&str]) {
        let api = api();
        for row in rows {
            let [t, debug, want] = row.split(" | ").collect::<Vec<_>>()[..] else {
                panic!("bad row: {row}");
            };
            let value = parse(debug).unwrap_or_else(|| panic!("no parse: {debug}"));
            let got = literal(&ty(t), &value, &api, top);
            assert_eq!(got.as_deref().unwrap_or("-"), want, "{row} (top: {top})");
            if let Some(src) = &got {
                let expr = syn::parse_str::<syn::Expr>(src);
                assert!(expr.is_ok(), "no expression: {src}");
            }
        }
    }

    #[test]
    fn scalars_are_written_as_printed() {
        let rows = [
            &format!("u64 | {:?} | 18446744073709551615", u64::MAX),
            &format!(r"char | {:?} | '\''", '\''),
            &format!("f64 | {:?} | 5.0", 5.0),
            &format!("f64 | {:?} | 1e16", 1e16),
            "bool | true | true",
            "() | () | ()",
            "f32 | inf | f32::INFINITY",
            "f64 | NaN | -",
            "Vec<f64> | [1.0, NaN] | -",
            "Option<f64> | Some(-1e-7) | Some(-1e-7)",
            "u8 | 1.5 | -",
            r#"u8 | "1" | -"#,
        ];
        check(true, &rows);
        check(false, &["i8 | -3 | -3", "f64 | -inf | f64::NEG_INFINITY"]);
    }

    #[test]
    fn strings_stay_literals_where_a_str_compares() {
        let text = format!("{:?}", "a\"b\n\u{7f}");
        let rows = [
            &format!("String | {text} | {text}"),
            &format!("&str | {text} | {text}"),
            r#"Option<String> | Some("a") | Some(String::from("a"))"#,
            r#"Option<&str> | Some("a") | Some("a")"#,
            r#"&String | "a" | "a""#,
            r#"Option<&String> | Some("a") | Some(&String::from("a"))"#,
            r#"&mut str | "a" | "a""#,
            r#"Option<&mut str> | Some("a") | -"#,
            r#"Box<str> | "a" | Box::<str>::from("a")"#,
        ];
        check(true, &rows);
        check(false, &[&format!("String | {text} | String::from({text})")]);
    }

    #[test]
    fn sequences_become_vec_array_or_slice_literals() {
        let rows = [
            r#"Vec<String> | ["a", "b"] | vec!["a", "b"]"#,
            r#"Vec<Option<String>> | [Some("a"), None] | vec![Some(String::from("a")), None]"#,
            "Vec<i32> | [] | -",
            "Option<Vec<String>> | Some([]) | Some(vec![])",
            // An empty inner Vec is filled by inference only for an element with a single
            // `PartialEq` impl, or from a sibling.
            "Vec<Vec<u8>> | [[], [1]] | vec![vec![], vec![1]]",
            "Vec<Vec<String>> | [[]] | -",
            r#"Vec<Vec<String>> | [[], ["a"]] | vec![vec![], vec!["a"]]"#,
            r#"Vec<Vec<Vec<String>>> | [[[]], [["a"]]] | -"#,
            "&[u8] | [1, 2] | [1, 2]",
            r#"&[String] | ["a"] | ["a"]"#,
            "&[u8] | [] | -",
            "Option<&[u8]> | Some([1]) | Some(&[1][..])",
            "Vec<&[u8]> | [[1], [1, 2]] | vec![&[1][..], &[1, 2][..]]",
            "[char; 2] | ['a', 'b'] | ['a', 'b']",
            "[char; 3] | ['a', 'b'] | -",
            r#"&Vec<String> | ["a"] | &vec!["a"]"#,
            "Box<[u8]> | [1] | vec![1].into_boxed_slice()",
        ];
        check(true, &rows);
        check(false, &[r#"Vec<String> | ["a"] | vec![String::from("a")]"#]);
        let open = Ty::Option(Box::new(Ty::Vec(Box::new(Ty::Param("T".into())))));
        let empty = parse("Some([])").unwrap();
        assert_eq!(literal(&open, &empty, &api(), true), None);
    }

    #[test]
    fn containers_pin_what_they_hold() {
        let rows = [
            "Result<u8, Shape> | Ok(1) | Ok(1)",
            "Result<u8, Shape> | Err(Empty) | Err(my_crate::Shape::Empty)",
            "Result<u8, Foreign> | Err(X) | -",
            "Result<u8, Foreign> | Ok(2) | Ok(2)",
            "Option<u8> | None | None",
            "Option<u8> | Ok(1) | -",
            "(i32,) | (1,) | (1,)",
            r#"(String, bool) | ("a", true) | (String::from("a"), true)"#,
            "(u8, u8) | (1,) | -",
            "Box<i32> | 5 | Box::new(5)",
            r#"HashMap<String, i32> | {"a": 1} | std::collections::HashMap::from([(String::from("a"), 1)])"#,
            "HashMap<String, i32> | {} | -",
            "Option<BTreeMap<u8, u8>> | Some({}) | Some(std::collections::BTreeMap::new())",
            "T | 1 | -",
        ];
        check(true, &rows);
        let param = Ty::Param("T".into());
        assert_eq!(literal(&param, &parse("1").unwrap(), &api(), true), None);
    }

    #[test]
    fn crate_types_are_built_when_callers_may() {
        let point = Point {
            x: -1,
            label: "p".into(),
            tags: vec![Some("t".into())],
        };
        let want = r#"my_crate::Point { x: -1, label: String::from("p"), tags: vec![Some(String::from("t"))] }"#;
        let wrapped = Shape::Wrapped(Box::new(Shape::Circle(0.5)));
        let wrapped_lit = "my_crate::Shape::Wrapped(Box::new(my_crate::Shape::Circle(0.5)))";
        let rows = [
            &format!("Point | {point:?} | {want}"),
            &format!("&Point | {point:?} | &{want}"),
            &format!("Shape | {:?} | my_crate::Shape::Empty", Shape::Empty),
            &format!("Shape | {wrapped:?} | {wrapped_lit}"),
            "Point | Point { x: 1 } | -",
            r#"Point | Other { x: 1, label: "", tags: [] } | -"#,
            "Id | Id(5) | my_crate::Id(5)",
            "Marker | Marker | my_crate::Marker",
            "Vec<Shape> | [Rect { w: 1, h: 2 }] | vec![my_crate::Shape::Rect { w: 1, h: 2 }]",
            "Shape | Square(1) | -",
            r#"Wrapper<String> | Wrapper { inner: "a" } | my_crate::Wrapper { inner: String::from("a") }"#,
            // Without its argument the field's type stays open.
            r#"Wrapper | Wrapper { inner: "a" } | -"#,
            "NoEq | NoEq { a: 1 } | -",
            "Hidden | Hidden { a: 1 } | -",
            "Open | Open { a: 1 } | -",
            "Foreign | Foreign | -",
        ];
        check(true, &rows);
    }
}
