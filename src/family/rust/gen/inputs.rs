//! Values to call the API with, by type: boundaries first (0, 1, -1, MIN, MAX, empty and
//! one-element collections, NaN), then the crate's own literals; the crate's types through their
//! public constructors, `Default`, literals of all-public structs and enum variants; closures for
//! `Fn` bounds. Generic parameters are instantiated with simple types that meet their bounds.

use super::model::{Api, Callable, Receiver, TypeKind};
use super::ty::{Bound, Ty};

/// A value as Rust source, and how big it is (the shortest input that shows a defect wins).
#[derive(Debug, Clone, PartialEq)]
pub struct Value {
    pub expr: String,
    pub size: usize,
}

impl Value {
    fn new(expr: impl Into<String>) -> Value {
        let expr = expr.into();
        let size = expr.len();
        Value { expr, size }
    }
}

/// How deep constructors nest in an argument (`Line::new(Point::new(0, 0), …)`).
const MAX_DEPTH: u8 = 2;

/// Traits every `i64` has: a parameter bounded only by these takes `i64`.
const I64_TRAITS: &[&str] = &[
    "Clone",
    "Copy",
    "Debug",
    "Display",
    "ToString",
    "PartialEq",
    "Eq",
    "PartialOrd",
    "Ord",
    "Hash",
    "Default",
    "Send",
    "Sync",
    "Sized",
    "Unpin",
    "Add",
    "Sub",
    "Mul",
    "Into",
    "From",
];

/// Traits `&str` has that `i64` lacks.
const STR_TRAITS: &[&str] = &["AsRef", "Borrow", "Into", "ToString", "Display"];

pub struct Inputs<'a> {
    api: &'a Api,
    strings: Vec<String>,
    ints: Vec<i128>,
}

impl<'a> Inputs<'a> {
    /// `extra_strings`: string literals of the crate's doc examples; `separators`: the
    /// punctuation the crate splits or matches on (`','` in `split_once(',')`).
    pub fn new(
        api: &'a Api,
        extra_strings: &[String],
        separators: &[char],
        seed: u64,
    ) -> Inputs<'a> {
        let mut rng = Rng(seed);
        // The empty string first (a boundary), then the crate's doc examples' words (what its
        // parsers are shown taking), a word and a sentence, text split on the crate's
        // punctuation (`1,2`, `a:b`), then the literals of its source.
        let mut strings: Vec<String> = vec!["".into()];
        let mut examples: Vec<String> = extra_strings
            .iter()
            .filter(|s| !s.is_empty())
            .cloned()
            .collect();
        examples.sort();
        examples.dedup();
        while strings.len() < 7 && !examples.is_empty() {
            let i = rng.below(examples.len());
            strings.push(examples.remove(i));
        }
        for s in ["a", "hello world", "héllo wörld"] {
            if !strings.iter().any(|t| t == s) {
                strings.push(s.into());
            }
        }
        for p in separators.iter().take(3) {
            strings.push(format!("1{p}2"));
            strings.push(format!("a{p}b"));
        }
        let mut own: Vec<String> = api
            .strings
            .iter()
            .filter(|s| !s.is_empty() && !strings.contains(s))
            .cloned()
            .collect();
        while strings.len() < 20 && !own.is_empty() {
            let i = rng.below(own.len());
            strings.push(own.remove(i));
        }

        let mut ints: Vec<i128> = api
            .ints
            .iter()
            .copied()
            .filter(|i| !matches!(i, -1..=2) && i.abs() < 100_000)
            .collect();
        rng.shuffle(&mut ints);
        ints.truncate(4);
        Inputs { api, strings, ints }
    }

    /// Values of `ty`, boundaries first, at most `limit`; none when it cannot be built.
    pub fn values(&self, ty: &Ty, limit: usize) -> Vec<Value> {
        let mut out = self.of(ty, 0);
        out.truncate(limit);
        out
    }

    fn of(&self, ty: &Ty, depth: u8) -> Vec<Value> {
        match ty {
            Ty::Unit => vec![Value::new("()")],
            Ty::Bool => vec![Value::new("false"), Value::new("true")],
            Ty::Char => ["'a'", "'0'", "' '", "'é'", "'Z'"].map(Value::new).to_vec(),
            Ty::Int(kind) => self.ints_of(kind),
            Ty::Float(kind) => [
                "0.0".to_string(),
                "1.5".into(),
                "-1.0".into(),
                "-0.0".into(),
                format!("{kind}::NAN"),
                format!("{kind}::INFINITY"),
                "1e10".into(),
            ]
            .map(Value::new)
            .to_vec(),
            Ty::String => self
                .strings
                .iter()
                .map(|s| Value::new(format!("String::from({s:?})")))
                .collect(),
            Ty::Ref(inner, mutable) => self.refs(inner, *mutable, depth),
            Ty::Vec(t) => self.sequences(t, depth, |items| format!("vec![{items}]")),
            Ty::Array(t, n) => {
                let items = self.of(t, depth + 1);
                if items.is_empty() || *n > 16 {
                    return Vec::new();
                }
                (0..items.len().min(3))
                    .map(|i| {
                        let all: Vec<&str> = (0..*n)
                            .map(|k| items[(i + k) % items.len()].expr.as_str())
                            .collect();
                        Value::new(format!("[{}]", all.join(", ")))
                    })
                    .collect()
            }
            Ty::Option(t) => {
                let mut out = vec![Value::new("None")];
                out.extend(
                    self.of(t, depth + 1)
                        .into_iter()
                        .take(4)
                        .map(|v| Value::new(format!("Some({})", v.expr))),
                );
                out
            }
            Ty::Result(t, e) => {
                let mut out: Vec<Value> = self
                    .of(t, depth + 1)
                    .into_iter()
                    .take(3)
                    .map(|v| Value::new(format!("Ok({})", v.expr)))
                    .collect();
                out.extend(
                    self.of(e, depth + 1)
                        .into_iter()
                        .take(2)
                        .map(|v| Value::new(format!("Err({})", v.expr))),
                );
                out
            }
            Ty::Tuple(ts) => {
                let parts: Vec<Vec<Value>> = ts.iter().map(|t| self.of(t, depth + 1)).collect();
                if parts.iter().any(Vec::is_empty) {
                    return Vec::new();
                }
                let longest = parts.iter().map(Vec::len).max().unwrap_or(0).min(4);
                (0..longest)
                    .map(|i| {
                        let items: Vec<&str> =
                            parts.iter().map(|p| p[i % p.len()].expr.as_str()).collect();
                        let comma = if items.len() == 1 { "," } else { "" };
                        Value::new(format!("({}{comma})", items.join(", ")))
                    })
                    .collect()
            }
            Ty::Map(kind, k, v) => {
                let (keys, vals) = (self.of(k, depth + 1), self.of(v, depth + 1));
                let mut out = vec![Value::new(format!("std::collections::{kind}::new()"))];
                if let (Some(k0), Some(v0)) = (keys.first(), vals.first()) {
                    out.push(Value::new(format!(
                        "std::collections::{kind}::from([({}, {})])",
                        k0.expr, v0.expr
                    )));
                }
                // Two entries only where the order is fixed: a hash map's order differs from
                // run to run, and a result that shows it would pass the two runs by chance.
                if let (Some(k1), Some(v1), "BTreeMap") = (keys.get(1), vals.get(1), *kind) {
                    out.push(Value::new(format!(
                        "std::collections::{kind}::from([({}, {}), ({}, {})])",
                        keys[0].expr, vals[0].expr, k1.expr, v1.expr
                    )));
                }
                out
            }
            Ty::Box(t) => self
                .of(t, depth)
                .into_iter()
                .map(|v| Value::new(format!("Box::new({})", v.expr)))
                .collect(),
            Ty::Named(name, args) if name == "IntoIter" && args.len() == 1 => {
                self.sequences(&args[0], depth, |items| {
                    format!("vec![{items}].into_iter()")
                })
            }
            Ty::Named(name, args) => self.named(name, args, depth),
            Ty::Impl(bounds) => self.implementing(bounds, depth),
            Ty::Str | Ty::Slice(_) | Ty::SelfType | Ty::Param(_) | Ty::Other(_) => Vec::new(),
        }
    }

    fn ints_of(&self, kind: &str) -> Vec<Value> {
        let signed = kind.starts_with('i');
        let mut out = vec![Value::new("0"), Value::new("1")];
        if signed {
            out.push(Value::new("-1"));
            out.push(Value::new(format!("{kind}::MIN")));
        }
        out.push(Value::new(format!("{kind}::MAX")));
        out.push(Value::new("2"));
        let fits = |i: i128| match kind {
            "u8" => (0..=255).contains(&i),
            "i8" => (-128..=127).contains(&i),
            "u16" => (0..=65535).contains(&i),
            "i16" => (-32768..=32767).contains(&i),
            k if k.starts_with('u') => i >= 0,
            _ => true,
        };
        out.extend(
            self.ints
                .iter()
                .filter(|i| fits(**i))
                .map(|i| Value::new(i.to_string())),
        );
        out
    }

    fn refs(&self, inner: &Ty, mutable: bool, depth: u8) -> Vec<Value> {
        let amp = if mutable { "&mut " } else { "&" };
        match inner {
            Ty::Str if !mutable => self
                .strings
                .iter()
                .map(|s| Value::new(format!("{s:?}")))
                .collect(),
            Ty::Slice(t) => self.sequences(t, depth, |items| format!("{amp}[{items}]")),
            other => self
                .of(other, depth)
                .into_iter()
                .map(|v| Value::new(format!("{amp}{}", v.expr)))
                .collect(),
        }
    }

    /// Empty, one element, three elements (a repeated first element among them).
    fn sequences(&self, t: &Ty, depth: u8, wrap: impl Fn(&str) -> String) -> Vec<Value> {
        let items = self.of(t, depth + 1);
        if items.is_empty() {
            return Vec::new();
        }
        let mut out = vec![Value::new(wrap(""))];
        out.push(Value::new(wrap(&items[items.len().min(2) - 1].expr)));
        let three: Vec<&str> = [0, items.len() / 2, 0]
            .iter()
            .map(|i| items[*i].expr.as_str())
            .collect();
        out.push(Value::new(wrap(&three.join(", "))));
        if items.len() > 2 {
            out.push(Value::new(wrap(&format!(
                "{}, {}",
                items[items.len() - 1].expr,
                items[1].expr
            ))));
        }
        // An empty `vec![]` may not say its element type: it is last, so a candidate that does
        // not infer it costs one value only.
        out.rotate_left(1);
        out
    }

    /// A crate type: unit variants and literals of its public shape, `Default`, its
    /// constructors (and other functions that return it) with simple arguments.
    fn named(&self, name: &str, args: &[Ty], depth: u8) -> Vec<Value> {
        let Some(decl) = self.api.ty(name) else {
            return Vec::new();
        };
        if depth > MAX_DEPTH {
            return Vec::new();
        }
        let mut out = Vec::new();
        let params: Vec<(String, Ty)> = decl
            .generics
            .iter()
            .zip(args.iter().chain(std::iter::repeat(&Ty::Int("i64"))))
            .map(|((n, _), t)| (n.clone(), t.clone()))
            .collect();
        let concrete = |t: &Ty| {
            t.substitute(&Ty::Named(name.into(), args.to_vec()), &|p| {
                params.iter().find(|(n, _)| n == p).map(|(_, t)| t.clone())
            })
        };
        if !decl.non_exhaustive {
            match &decl.kind {
                TypeKind::Enum { variants } => {
                    for v in variants {
                        let fields: Option<Vec<String>> = v
                            .fields
                            .iter()
                            .map(|f| {
                                self.of(&concrete(&f.ty), depth + 1)
                                    .first()
                                    .map(|x| x.expr.clone())
                            })
                            .collect();
                        let Some(fields) = fields else { continue };
                        out.push(Value::new(match (v.fields.is_empty(), v.tuple) {
                            (true, _) => format!("{}::{}", decl.path, v.name),
                            (false, true) => {
                                format!("{}::{}({})", decl.path, v.name, fields.join(", "))
                            }
                            (false, false) => format!(
                                "{}::{} {{ {} }}",
                                decl.path,
                                v.name,
                                v.fields
                                    .iter()
                                    .zip(&fields)
                                    .map(|(f, x)| format!(
                                        "{}: {x}",
                                        f.name.as_deref().unwrap_or("_")
                                    ))
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            ),
                        }));
                    }
                }
                TypeKind::Struct { fields, tuple } if fields.iter().all(|f| f.public) => {
                    let values: Option<Vec<Vec<Value>>> = fields
                        .iter()
                        .map(|f| {
                            let v = self.of(&concrete(&f.ty), depth + 1);
                            (!v.is_empty()).then_some(v)
                        })
                        .collect();
                    if let Some(values) = values {
                        for i in 0..2 {
                            let items: Vec<String> = fields
                                .iter()
                                .zip(&values)
                                .map(|(f, v)| {
                                    let x = &v[(i + 1).min(v.len() - 1) * i].expr;
                                    match (&f.name, tuple) {
                                        (Some(n), false) => format!("{n}: {x}"),
                                        _ => x.clone(),
                                    }
                                })
                                .collect();
                            out.push(Value::new(match (fields.is_empty(), tuple) {
                                (true, _) => decl.path.clone(),
                                (false, true) => format!("{}({})", decl.path, items.join(", ")),
                                (false, false) => {
                                    format!("{} {{ {} }}", decl.path, items.join(", "))
                                }
                            }));
                        }
                    }
                }
                _ => {}
            }
        }
        if decl.traits.contains("Default") {
            out.push(Value::new(format!("<{} as Default>::default()", decl.path)));
        }
        for c in self.api.callables.iter().filter(|c| returns(c, name)) {
            if c.receiver != Receiver::None || c.via_trait.as_deref() == Some("Default") {
                continue;
            }
            // Each constructor with its arguments' first, second and third values (a stack
            // of capacity 0 and one of capacity 1 behave differently).
            // A fallible one (a parser) is tried with more of its inputs: most fail.
            let picks = match c.ret {
                Ty::Option(_) | Ty::Result(..) => 6,
                _ => 3,
            };
            for pick in 0..picks {
                if let Some(call) = self.simple_call(c, name, args, depth, pick) {
                    if !out.contains(&call) {
                        out.push(call);
                    }
                }
            }
            if out.len() >= 12 {
                break;
            }
        }
        out.dedup();
        out
    }

    /// `path(args…)` with each argument its type's first values, unwrapped when the function
    /// returns an Option or a Result of the type.
    fn simple_call(
        &self,
        c: &Callable,
        owner: &str,
        args: &[Ty],
        depth: u8,
        pick: usize,
    ) -> Option<Value> {
        let me = Ty::Named(owner.into(), args.to_vec());
        let (params, _) = instantiate(c, &me, self.api)?;
        let exprs: Option<Vec<String>> = params
            .iter()
            .map(|t| {
                let values = self.of(t, depth + 1);
                let at = pick.min(values.len().saturating_sub(1));
                values.into_iter().nth(at).map(|v| v.expr)
            })
            .collect();
        let unwrap = match &c.ret {
            Ty::Option(_) | Ty::Result(..) => ".unwrap()",
            _ => "",
        };
        Some(Value::new(format!(
            "{}({}){unwrap}",
            turbofish(&c.path, &me),
            exprs?.join(", ")
        )))
    }

    /// A value of some type with these bounds: closures for `Fn` traits, else the simple type
    /// the bounds allow.
    fn implementing(&self, bounds: &[Bound], depth: u8) -> Vec<Value> {
        if let Some(f) = bounds
            .iter()
            .find(|b| matches!(b.name.as_str(), "Fn" | "FnMut" | "FnOnce"))
        {
            return self.closures(f);
        }
        match satisfying(bounds, self.api) {
            Some(t) => self.of(&t, depth),
            None => Vec::new(),
        }
    }

    /// Identity, constant and predicate closures for `Fn(args) -> out`.
    fn closures(&self, f: &Bound) -> Vec<Value> {
        let params = vec!["_"; f.args.len()].join(", ");
        let out = f.output.as_deref().cloned().unwrap_or(Ty::Unit);
        let mut closures = Vec::new();
        if f.args.len() == 1 && f.args[0] == out {
            closures.push(Value::new("|x| x"));
        }
        if out == Ty::Bool {
            closures.push(Value::new(format!("|{params}| true")));
            closures.push(Value::new(format!("|{params}| false")));
        } else if out.is_closed() {
            for v in self.of(&out, MAX_DEPTH).into_iter().take(2) {
                closures.push(Value::new(format!("|{params}| {}", v.expr)));
            }
        }
        closures
    }
}

/// `my::Stack::new` called on `Stack<i64>` as `my::Stack::<i64>::new`: a constructor whose
/// arguments do not mention the type's parameters would not infer them.
pub fn turbofish(path: &str, owner: &Ty) -> String {
    let Ty::Named(_, args) = owner else {
        return path.to_string();
    };
    let spelled: Option<Vec<String>> = args.iter().map(|a| a.rust("")).collect();
    match (spelled, path.rsplit_once("::")) {
        (Some(spelled), Some((ty, method))) if !spelled.is_empty() && !path.starts_with('<') => {
            format!("{ty}::<{}>::{method}", spelled.join(", "))
        }
        _ => path.to_string(),
    }
}

/// Whether `c` gives a value of the crate type `name` (itself, or in an Option or a Result).
fn returns(c: &Callable, name: &str) -> bool {
    let is_it = |t: &Ty| match t {
        Ty::SelfType => matches!(&c.owner, Some(Ty::Named(n, _)) if n == name),
        Ty::Named(n, _) => n == name,
        _ => false,
    };
    match &c.ret {
        Ty::Option(t) | Ty::Result(t, _) => is_it(t),
        t => is_it(t),
    }
}

/// A simple type that meets every bound (None when none does).
pub fn satisfying(bounds: &[Bound], api: &Api) -> Option<Ty> {
    let names: Vec<&str> = bounds.iter().map(|b| b.name.as_str()).collect();
    if let Some(it) = bounds
        .iter()
        .find(|b| matches!(b.name.as_str(), "Iterator" | "IntoIterator"))
    {
        let item = it.output.as_deref().cloned().unwrap_or(Ty::Int("i64"));
        let item = if item.is_closed() {
            item
        } else {
            Ty::Int("i64")
        };
        return Some(if it.name == "Iterator" {
            Ty::Named("IntoIter".into(), vec![item])
        } else {
            Ty::Vec(Box::new(item))
        });
    }
    let wants_str = bounds.iter().any(|b| {
        matches!(b.name.as_str(), "AsRef" | "Borrow" | "Into")
            && b.args.iter().any(|a| matches!(a, Ty::Str | Ty::String))
    });
    if wants_str
        && names
            .iter()
            .all(|n| STR_TRAITS.contains(n) || I64_TRAITS.contains(n) && *n != "Copy")
    {
        return Some(Ty::Ref(Box::new(Ty::Str), false));
    }
    let bytes = bounds.iter().any(|b| {
        b.name == "AsRef" && matches!(b.args.first(), Some(Ty::Slice(t)) if **t == Ty::Int("u8"))
    });
    if bytes {
        return Some(Ty::Vec(Box::new(Ty::Int("u8"))));
    }
    let plain = bounds.iter().all(|b| {
        I64_TRAITS.contains(&b.name.as_str())
            && match b.name.as_str() {
                "Into" | "From" => b.args.first() == Some(&Ty::Int("i64")),
                _ => true,
            }
    });
    if plain {
        return Some(Ty::Int("i64"));
    }
    // A crate trait: one of the crate's types that implements it (and the others, if any).
    let own: Vec<&Bound> = bounds
        .iter()
        .filter(|b| api.implementors.contains_key(&b.name))
        .collect();
    let first = own.first()?;
    api.implementors[&first.name]
        .iter()
        .find(|t| {
            own.iter().all(|b| api.implementors[&b.name].contains(t))
                && api.ty(t).is_some_and(|d| {
                    bounds.iter().all(|b| {
                        api.implementors.contains_key(&b.name)
                            || d.traits.contains(&b.name)
                            || matches!(b.name.as_str(), "Sized" | "Send" | "Sync")
                    })
                })
        })
        .map(|t| Ty::Named(t.clone(), Vec::new()))
}

/// The callable's parameter types and return type with `Self` as `owner` and each generic
/// parameter a simple type that meets its bounds (None when one has none).
pub fn instantiate(c: &Callable, owner: &Ty, api: &Api) -> Option<(Vec<Ty>, Ty)> {
    // The impl's parameters take the owner's arguments; the function's own their bounds'
    // type, or (for `Fn` bounds) stay `impl Fn` for the closures.
    let from_owner = |p: &str| -> Option<Ty> {
        let (Some(Ty::Named(_, decl_args)), Ty::Named(_, args)) = (&c.owner, owner) else {
            return None;
        };
        decl_args
            .iter()
            .position(|a| matches!(a, Ty::Param(n) if n == p))
            .and_then(|i| args.get(i).cloned())
    };
    let mut chosen = Vec::new();
    for (name, bounds) in &c.generics {
        let t = match from_owner(name) {
            Some(t) => t,
            None if bounds
                .iter()
                .any(|b| matches!(b.name.as_str(), "Fn" | "FnMut" | "FnOnce")) =>
            {
                Ty::Impl(bounds.clone())
            }
            None => satisfying(bounds, api)?,
        };
        chosen.push((name.clone(), t));
    }
    let lookup = |p: &str| chosen.iter().find(|(n, _)| n == p).map(|(_, t)| t.clone());
    let sub = |t: &Ty| {
        let t = t.substitute(owner, &lookup);
        match t {
            Ty::Impl(ref b) if !b.iter().any(|b| b.name.starts_with("Fn")) => {
                satisfying(b, api).unwrap_or(t)
            }
            t => t,
        }
    };
    let params: Vec<Ty> = c.params.iter().map(|(_, t)| sub(t)).collect();
    let ok = |t: &Ty| t.is_closed() || matches!(t, Ty::Impl(_));
    params.iter().all(ok).then(|| (params.clone(), sub(&c.ret)))
}

pub use crate::util::Rng;
