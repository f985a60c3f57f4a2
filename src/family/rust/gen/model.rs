//! The crate's public surface as the generator sees it: what can be called from an integration
//! test, with which types, and what each type offers (fields, variants, traits). `api` fills it
//! from the source; the inputs, the probe and the assertions read it.

use std::collections::{BTreeMap, BTreeSet};

use super::ty::{Bound, Ty};

/// A crate's public API.
#[derive(Debug, Clone, Default)]
pub struct Api {
    /// The crate's name as code spells it (`my_crate`: the lib name, `-` made `_`).
    pub crate_name: String,
    /// The library's modules, the root first, then in the order the tree declares them.
    pub modules: Vec<Module>,
    /// Public callables, by file, then line.
    pub callables: Vec<Callable>,
    /// Public types by name (the first public one when two modules share a name).
    pub types: BTreeMap<String, TypeDecl>,
    /// The crate's public traits by name -> the names of the crate's types that implement them.
    pub implementors: BTreeMap<String, Vec<String>>,
    /// Doc examples of public items and modules.
    pub examples: Vec<Example>,
    /// Public items not offered to the generator, with why (`unsafe fn`, `async fn`, `macro`).
    pub left_out: Vec<LeftOut>,
    /// String literals of the crate's source (at most 64 characters, deduplicated, sorted).
    pub strings: Vec<String>,
    /// Integer literals of the crate's source (deduplicated, sorted).
    pub ints: Vec<i128>,
}

/// A module of the library.
#[derive(Debug, Clone, PartialEq)]
pub struct Module {
    /// Crate-relative path: `""` for the root, `parser`, `parser::lexer`.
    pub path: String,
    /// Repository-relative file: `src/parser.rs` (inline modules: their parent's file).
    pub file: String,
    /// Reachable from outside the crate by its path (every module on the way is `pub`).
    pub public: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Receiver {
    /// An associated or free function.
    None,
    /// `&self`
    Ref,
    /// `&mut self`
    RefMut,
    /// `self`
    Value,
}

/// Something a test can call.
#[derive(Debug, Clone)]
pub struct Callable {
    /// The file it is written in (repository-relative) and that file's module path.
    pub file: String,
    pub module: String,
    /// The function's name (`push`, `from_str`, `add` for `impl Add`).
    pub name: String,
    /// The type it belongs to, for a method or an associated function: the impl's self type
    /// (`Stack<T>`, with the impl's parameters as `Ty::Param`).
    pub owner: Option<Ty>,
    /// How code outside the crate calls it: `my_crate::parse`, `my_crate::Stack::push`,
    /// `<my_crate::Point as std::ops::Add>::add`, `<my_crate::Id as std::str::FromStr>::from_str`.
    pub path: String,
    pub receiver: Receiver,
    /// The parameters after the receiver: (name, type).
    pub params: Vec<(String, Ty)>,
    /// What it returns (`Ty::Unit` when nothing), `Self` as `Ty::SelfType`, associated types
    /// (`Self::Err`, `Self::Output`) resolved to the impl's.
    pub ret: Ty,
    /// The generic parameters of the function and of its impl, with their bounds (where
    /// clauses included).
    pub generics: Vec<(String, Vec<Bound>)>,
    /// First and last line of the function in `file`.
    pub lines: (u32, u32),
    /// Its docs have a `# Panics` section.
    pub documents_panics: bool,
    /// Its doc comment's text (a change to it tells an intended behaviour change).
    pub doc: String,
    /// The trait the function implements (`FromStr`, `Add`, `Display`, a crate trait), if any.
    pub via_trait: Option<String>,
}

/// A type the crate defines publicly.
#[derive(Debug, Clone)]
pub struct TypeDecl {
    pub name: String,
    /// How code outside the crate names it: `my_crate::geometry::Point`.
    pub path: String,
    pub file: String,
    pub kind: TypeKind,
    pub generics: Vec<(String, Vec<Bound>)>,
    /// Traits it derives or implements, by last segment: `Debug`, `PartialEq`, `Clone`,
    /// `Default`, `Display`, `FromStr`, `Copy`, `Eq`, `Hash`, `Ord`, crate traits.
    pub traits: BTreeSet<String>,
    /// `#[non_exhaustive]`: no literal of it outside the crate.
    pub non_exhaustive: bool,
}

#[derive(Debug, Clone)]
pub enum TypeKind {
    /// Named fields, or a tuple struct's (names `None`); a unit struct has none.
    Struct {
        fields: Vec<Field>,
        tuple: bool,
    },
    Enum {
        variants: Vec<Variant>,
    },
    /// `type Result<T> = std::result::Result<T, Error>;`: what it stands for (its generic
    /// parameters as `Ty::Param`).
    Alias(Ty),
    /// A union, anything else: used by name only.
    Other,
}

#[derive(Debug, Clone)]
pub struct Field {
    /// `None` for a tuple field.
    pub name: Option<String>,
    pub ty: Ty,
    pub public: bool,
}

#[derive(Debug, Clone)]
pub struct Variant {
    pub name: String,
    pub fields: Vec<Field>,
    /// `V(a, b)` rather than `V { a, b }`.
    pub tuple: bool,
}

/// A doc example: a ```` ``` ```` block of Rust in the docs of a public item or module.
#[derive(Debug, Clone)]
pub struct Example {
    pub file: String,
    /// The line of the block's first code line in `file`.
    pub line: u32,
    /// The item it documents: `my_crate::parse`, `my_crate::Stack::push`, `my_crate::parser`.
    pub item: String,
    /// The code as rustdoc runs it: hidden lines (`# `) shown, fences and attributes removed.
    pub code: String,
}

#[derive(Debug, Clone)]
pub struct LeftOut {
    pub item: String,
    pub why: String,
}

impl Api {
    /// The type declared under `name`, if the crate declares it publicly.
    pub fn ty(&self, name: &str) -> Option<&TypeDecl> {
        self.types.get(name)
    }

    /// `ty` with the crate's type aliases replaced by what they stand for, at any depth.
    pub fn unalias(&self, ty: &Ty) -> Ty {
        self.unalias_at(ty, 0)
    }

    fn unalias_at(&self, ty: &Ty, depth: u8) -> Ty {
        if depth > 8 {
            return ty.clone();
        }
        let again = |t: &Ty| Box::new(self.unalias_at(t, depth + 1));
        match ty {
            Ty::Named(name, args) => match self.types.get(name).map(|d| (&d.kind, &d.generics)) {
                Some((TypeKind::Alias(target), generics)) => {
                    let given = |p: &str| {
                        let i = generics.iter().position(|(n, _)| n == p)?;
                        args.get(i).cloned()
                    };
                    let target = target.substitute(&Ty::SelfType, &given);
                    self.unalias_at(&target, depth + 1)
                }
                _ => Ty::Named(
                    name.clone(),
                    args.iter().map(|a| self.unalias_at(a, depth + 1)).collect(),
                ),
            },
            Ty::Vec(t) => Ty::Vec(again(t)),
            Ty::Slice(t) => Ty::Slice(again(t)),
            Ty::Array(t, n) => Ty::Array(again(t), *n),
            Ty::Option(t) => Ty::Option(again(t)),
            Ty::Result(t, e) => Ty::Result(again(t), again(e)),
            Ty::Tuple(ts) => Ty::Tuple(ts.iter().map(|t| self.unalias_at(t, depth + 1)).collect()),
            Ty::Map(k, a, b) => Ty::Map(k, again(a), again(b)),
            Ty::Box(t) => Ty::Box(again(t)),
            Ty::Ref(t, m) => Ty::Ref(again(t), *m),
            other => other.clone(),
        }
    }
}
