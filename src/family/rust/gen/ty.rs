//! The types of the public API as the generator reasons about them: what a parameter takes, what
//! a call returns, read from `syn`'s types. Generic parameters stay named until the inputs pick a
//! simple type that satisfies their bounds.

use quote::ToTokens;

/// A type of a signature.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Ty {
    Unit,
    Bool,
    Char,
    /// `i8` … `u128`, `isize`, `usize`.
    Int(&'static str),
    /// `f32`, `f64`.
    Float(&'static str),
    /// `str` (only behind a reference).
    Str,
    String,
    Vec(Box<Ty>),
    /// `[T]` (only behind a reference).
    Slice(Box<Ty>),
    Array(Box<Ty>, usize),
    Option(Box<Ty>),
    Result(Box<Ty>, Box<Ty>),
    Tuple(Vec<Ty>),
    /// `HashMap<K, V>` or `BTreeMap<K, V>` (the name as written).
    Map(&'static str, Box<Ty>, Box<Ty>),
    Box(Box<Ty>),
    /// `&T` (`mutable`: `&mut T`).
    Ref(Box<Ty>, bool),
    /// A type of the crate (or another crate) by its last path segment, with its generic
    /// arguments: `Point`, `Parser<i64>`.
    Named(String, Vec<Ty>),
    /// `Self` inside an impl.
    SelfType,
    /// A generic parameter of the item, by name.
    Param(String),
    /// `impl Trait` in argument position: its bounds as written.
    Impl(Vec<Bound>),
    /// Anything the generator does not build values of, with what it is.
    Other(String),
}

/// A trait bound as the generator uses it: the trait's last segment and, for `Fn` traits and
/// traits with an associated `Item`/`Output`, the types they name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Bound {
    /// `AsRef`, `Into`, `Fn`, `Iterator`, `Display`, …
    pub name: String,
    /// Generic arguments (`AsRef<str>` -> [Str]; `Fn(i64) -> bool` -> [Int]).
    pub args: Vec<Ty>,
    /// `Fn(..) -> T` output, `Iterator<Item = T>` item.
    pub output: Option<Box<Ty>>,
}

const INTS: [&str; 12] = [
    "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128", "usize",
];

impl Ty {
    /// Reads a `syn` type.
    pub fn of(ty: &syn::Type) -> Ty {
        match ty {
            syn::Type::Paren(p) => Ty::of(&p.elem),
            syn::Type::Group(g) => Ty::of(&g.elem),
            syn::Type::Tuple(t) if t.elems.is_empty() => Ty::Unit,
            syn::Type::Tuple(t) => Ty::Tuple(t.elems.iter().map(Ty::of).collect()),
            syn::Type::Reference(r) => Ty::Ref(Box::new(Ty::of(&r.elem)), r.mutability.is_some()),
            syn::Type::Slice(s) => Ty::Slice(Box::new(Ty::of(&s.elem))),
            syn::Type::Array(a) => match array_len(&a.len) {
                Some(n) => Ty::Array(Box::new(Ty::of(&a.elem)), n),
                None => Ty::Other(format!("[_; {}]", a.len.to_token_stream())),
            },
            syn::Type::ImplTrait(i) => Ty::Impl(
                i.bounds
                    .iter()
                    .filter_map(|b| match b {
                        syn::TypeParamBound::Trait(t) => Some(Bound::of(&t.path)),
                        _ => None,
                    })
                    .collect(),
            ),
            syn::Type::Path(p) if p.qself.is_none() => Ty::of_path(&p.path),
            other => Ty::Other(other.to_token_stream().to_string()),
        }
    }

    fn of_path(path: &syn::Path) -> Ty {
        let Some(last) = path.segments.last() else {
            return Ty::Other(String::new());
        };
        let name = last.ident.to_string();
        let args: Vec<Ty> = match &last.arguments {
            syn::PathArguments::AngleBracketed(a) => a
                .args
                .iter()
                .filter_map(|g| match g {
                    syn::GenericArgument::Type(t) => Some(Ty::of(t)),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        };
        let one = |args: &[Ty]| Box::new(args.first().cloned().unwrap_or(Ty::Unit));
        let two = |args: &[Ty]| Box::new(args.get(1).cloned().unwrap_or(Ty::Unit));
        if path.segments.len() == 1 && args.is_empty() {
            if let Some(i) = INTS.iter().find(|i| **i == name) {
                return Ty::Int(i);
            }
            match name.as_str() {
                "f32" => return Ty::Float("f32"),
                "f64" => return Ty::Float("f64"),
                "bool" => return Ty::Bool,
                "char" => return Ty::Char,
                "str" => return Ty::Str,
                "String" => return Ty::String,
                "Self" => return Ty::SelfType,
                _ => {}
            }
        }
        match (name.as_str(), args.len()) {
            ("String", 0) => Ty::String,
            ("Vec", 1) => Ty::Vec(one(&args)),
            ("Option", 1) => Ty::Option(one(&args)),
            ("Result", 2) => Ty::Result(one(&args), two(&args)),
            ("Box", 1) => Ty::Box(one(&args)),
            ("HashMap", 2) => Ty::Map("HashMap", one(&args), two(&args)),
            ("BTreeMap", 2) => Ty::Map("BTreeMap", one(&args), two(&args)),
            _ => Ty::Named(name, args),
        }
    }

    /// The type as Rust source, with `self_ty` for `Self` (None when a part has no spelling:
    /// an `impl Trait`, an unread type).
    pub fn rust(&self, self_ty: &str) -> Option<String> {
        let list = |tys: &[Ty]| -> Option<String> {
            Some(
                tys.iter()
                    .map(|t| t.rust(self_ty))
                    .collect::<Option<Vec<_>>>()?
                    .join(", "),
            )
        };
        Some(match self {
            Ty::Unit => "()".into(),
            Ty::Bool => "bool".into(),
            Ty::Char => "char".into(),
            Ty::Int(i) | Ty::Float(i) => i.to_string(),
            Ty::Str => "str".into(),
            Ty::String => "String".into(),
            Ty::Vec(t) => format!("Vec<{}>", t.rust(self_ty)?),
            Ty::Slice(t) => format!("[{}]", t.rust(self_ty)?),
            Ty::Array(t, n) => format!("[{}; {n}]", t.rust(self_ty)?),
            Ty::Option(t) => format!("Option<{}>", t.rust(self_ty)?),
            Ty::Result(t, e) => format!("Result<{}, {}>", t.rust(self_ty)?, e.rust(self_ty)?),
            Ty::Tuple(ts) if ts.len() == 1 => format!("({},)", list(ts)?),
            Ty::Tuple(ts) => format!("({})", list(ts)?),
            Ty::Map(kind, k, v) => format!(
                "std::collections::{kind}<{}, {}>",
                k.rust(self_ty)?,
                v.rust(self_ty)?
            ),
            Ty::Box(t) => format!("Box<{}>", t.rust(self_ty)?),
            Ty::Ref(t, true) => format!("&mut {}", t.rust(self_ty)?),
            Ty::Ref(t, false) => format!("&{}", t.rust(self_ty)?),
            Ty::Named(n, args) if args.is_empty() => n.clone(),
            Ty::Named(n, args) => format!("{n}<{}>", list(args)?),
            Ty::SelfType => self_ty.to_string(),
            Ty::Param(_) | Ty::Impl(_) | Ty::Other(_) => return None,
        })
    }

    /// The type with `Self` and the generic parameters replaced.
    pub fn substitute(&self, self_ty: &Ty, params: &dyn Fn(&str) -> Option<Ty>) -> Ty {
        let sub = |t: &Ty| Box::new(t.substitute(self_ty, params));
        match self {
            Ty::SelfType => self_ty.clone(),
            Ty::Param(p) => params(p).unwrap_or_else(|| self.clone()),
            Ty::Named(n, args) if args.is_empty() => params(n).unwrap_or_else(|| self.clone()),
            Ty::Named(n, args) => Ty::Named(
                n.clone(),
                args.iter().map(|a| a.substitute(self_ty, params)).collect(),
            ),
            Ty::Vec(t) => Ty::Vec(sub(t)),
            Ty::Slice(t) => Ty::Slice(sub(t)),
            Ty::Array(t, n) => Ty::Array(sub(t), *n),
            Ty::Option(t) => Ty::Option(sub(t)),
            Ty::Result(t, e) => Ty::Result(sub(t), sub(e)),
            Ty::Tuple(ts) => Ty::Tuple(ts.iter().map(|t| t.substitute(self_ty, params)).collect()),
            Ty::Map(kind, k, v) => Ty::Map(kind, sub(k), sub(v)),
            Ty::Box(t) => Ty::Box(sub(t)),
            Ty::Ref(t, m) => Ty::Ref(sub(t), *m),
            other => other.clone(),
        }
    }

    /// Whether the type mentions anything the generator cannot spell or build.
    pub fn is_closed(&self) -> bool {
        match self {
            Ty::Param(_) | Ty::Impl(_) | Ty::Other(_) | Ty::SelfType => false,
            Ty::Vec(t) | Ty::Slice(t) | Ty::Array(t, _) | Ty::Option(t) | Ty::Box(t) => {
                t.is_closed()
            }
            Ty::Ref(t, _) => t.is_closed(),
            Ty::Result(a, b) | Ty::Map(_, a, b) => a.is_closed() && b.is_closed(),
            Ty::Tuple(ts) | Ty::Named(_, ts) => ts.iter().all(Ty::is_closed),
            _ => true,
        }
    }
}

impl Bound {
    pub fn of(path: &syn::Path) -> Bound {
        let Some(last) = path.segments.last() else {
            return Bound {
                name: String::new(),
                args: Vec::new(),
                output: None,
            };
        };
        let mut args = Vec::new();
        let mut output = None;
        match &last.arguments {
            syn::PathArguments::AngleBracketed(a) => {
                for g in &a.args {
                    match g {
                        syn::GenericArgument::Type(t) => args.push(Ty::of(t)),
                        syn::GenericArgument::AssocType(at) => {
                            output = Some(Box::new(Ty::of(&at.ty)));
                        }
                        _ => {}
                    }
                }
            }
            syn::PathArguments::Parenthesized(p) => {
                args = p.inputs.iter().map(Ty::of).collect();
                output = Some(Box::new(match &p.output {
                    syn::ReturnType::Default => Ty::Unit,
                    syn::ReturnType::Type(_, t) => Ty::of(t),
                }));
            }
            syn::PathArguments::None => {}
        }
        Bound {
            name: last.ident.to_string(),
            args,
            output,
        }
    }
}

fn array_len(expr: &syn::Expr) -> Option<usize> {
    match expr {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => i.base10_parse().ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ty(src: &str) -> Ty {
        Ty::of(&syn::parse_str::<syn::Type>(src).unwrap())
    }

    #[test]
    fn common_types_are_read_and_spelled_back() {
        for src in [
            "Vec<Option<String>>",
            "&[u8]",
            "&mut Vec<i64>",
            "Result<(u32, bool), Error>",
            "[char; 3]",
            "Point",
        ] {
            assert_eq!(
                ty(src).rust("S").unwrap().replace(' ', ""),
                src.replace(' ', "")
            );
        }
        assert_eq!(
            ty("std::collections::HashMap<String, usize>"),
            Ty::Map("HashMap", Box::new(Ty::String), Box::new(Ty::Int("usize")))
        );
        assert_eq!(ty("impl Fn(i64) -> bool").rust("S"), None);
    }
}
