//! Reads a crate's public API from its source with `syn`: the module tree, the name code outside
//! the crate calls each public item by (the shortest path, re-exports followed to a fixed point),
//! the callables, the public types, the doc examples and the literals of the source.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use proc_macro2::{Delimiter, TokenStream, TokenTree};
use quote::ToTokens;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Attribute, FnArg, ImplItem, Item, Meta, Token};

use super::docs::{doc_lines, documents_panics, examples, line, str_lit};
use super::model::{Api, Callable, Field, LeftOut, Module, Receiver, TypeDecl, TypeKind};
use super::ty::{Bound, Ty};

/// Why a crate's API could not be read (each names the file).
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("cannot read {0}: {1}")]
    Read(String, #[source] std::io::Error),
    #[error("{0} does not parse: {2} (line {1})")]
    Parse(String, usize, String),
    #[error("{0} is not valid TOML: {1}")]
    Manifest(String, String),
    #[error("{0} has no [package] (a workspace root)")]
    NoPackage(String),
    #[error("{0} has no library target (no src/lib.rs, no [lib] path)")]
    NoLib(String),
}

/// Reads the public API of the crate at `root` (the folder with its Cargo.toml).
pub fn discover(root: &Path) -> Result<Api, ApiError> {
    let (name, lib) = manifest(root)?;
    let (mut mods, mut top) = (Vec::new(), Mod::default());
    (top.vis, top.public) = (true, true);
    let dir = lib.parent().unwrap_or(Path::new(""));
    add(root, &mut mods, top, Some(&lib), dir)?;
    Ok(Crate::new(name, mods).api())
}

fn manifest(root: &Path) -> Result<(String, PathBuf), ApiError> {
    let file = || "Cargo.toml".to_string();
    let text = std::fs::read_to_string(root.join(file())).map_err(|e| ApiError::Read(file(), e))?;
    let doc = text.parse::<toml::Table>();
    let doc = doc.map_err(|e| ApiError::Manifest(file(), e.message().to_string()))?;
    let at = |t: &str, k: &str| doc.get(t)?.get(k)?.as_str().map(str::to_string);
    let package = at("package", "name").ok_or_else(|| ApiError::NoPackage(file()))?;
    let name = at("lib", "name").unwrap_or(package).replace('-', "_");
    let default = Some(PathBuf::from("src/lib.rs")).filter(|p| root.join(p).is_file());
    let lib = at("lib", "path").map(PathBuf::from).or(default);
    Ok((name, lib.ok_or_else(|| ApiError::NoLib(file()))?))
}

/// A module: its `mod` item is `pub` (`vis`), every one on the way is (`public`); `docs`.
#[derive(Default)]
struct Mod {
    segs: Vec<String>,
    parent: Option<usize>,
    vis: bool,
    public: bool,
    file: String,
    docs: Vec<Attribute>,
    items: Vec<Item>,
}
/// The values of one variant of an enum: `only!(items, ImplItem::Fn)`.
macro_rules! only {
    ($it:expr, $($v:tt)+) => { $it.filter_map(|x| match x { $($v)+(v) => Some(v), _ => None }) };
}

/// Adds the module (from `rel` unless inline; its `mod x;` files in `dir`), then its modules.
fn add(root: &Path, mods: &mut Vec<Mod>, mut md: Mod, rel: Option<&Path>, dir: &Path) -> Res {
    if let Some(rel) = rel {
        md.file = rel.to_string_lossy().trim_start_matches("./").to_string();
        // A `#[path]` that leads back to a file already read would recurse for ever.
        if mods.iter().any(|m| m.file == md.file) || mods.len() > 4096 {
            return Ok(());
        }
        let text = std::fs::read_to_string(root.join(rel));
        let text = text.map_err(|e| ApiError::Read(md.file.clone(), e))?;
        let bad = |e: syn::Error| ApiError::Parse(md.file.clone(), line(e.span()), e.to_string());
        let parsed = syn::parse_file(&text).map_err(bad)?;
        md.docs.extend(parsed.attrs);
        md.items = parsed.items;
    }
    // `#[path]`s are relative to the file's folder (an inline module's: its own).
    let attr_dir = rel.and_then(Path::parent).unwrap_or(dir);
    md.items.retain(|i| !skipped(item_attrs(i)));
    let (me, items) = (mods.len(), md.items.clone());
    mods.push(md);
    for c in only!(items.into_iter(), Item::Mod) {
        let (name, vis) = (c.ident.to_string(), is_pub(&c.vis));
        let path = c.attrs.iter().find_map(|a| str_lit(&a.meta, "path"));
        let (inline, up) = (c.content.is_some(), &mods[me]);
        let sub = Mod {
            segs: [up.segs.clone(), vec![name.clone()]].concat(),
            parent: Some(me),
            vis,
            public: up.public && vis,
            file: up.file.clone(),
            docs: c.attrs,
            items: c.content.map(|c| c.1).unwrap_or_default(),
        };
        let sub_dir = dir.join(path.as_deref().unwrap_or(&name));
        let flat = dir.join(name + ".rs");
        let rel = match &path {
            _ if inline => None,
            Some(p) => Some(attr_dir.join(p)),
            None if root.join(&flat).is_file() => Some(flat),
            None => Some(sub_dir.join("mod.rs")),
        };
        // Its `mod x;` files: beside a `#[path]` file, else in `dir/name`.
        let next = path.as_ref().and(rel.as_deref()).and_then(Path::parent);
        if rel.as_ref().is_none_or(|r| root.join(r).is_file()) {
            add(root, mods, sub, rel.as_deref(), next.unwrap_or(&sub_dir))?;
        }
    }
    Ok(())
}

type Res = Result<(), ApiError>;

/// A name a module declares or imports: an item (`Crate::defs`) or a module.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Target {
    Def(usize),
    Mod(usize),
}
/// An item the crate declares (fn, type, trait): `mods[module].items[item]`, its name.
struct Def {
    module: usize,
    item: usize,
    name: String,
}
/// The names a `use` imports: (path before the name, `Some((name, alias))` or a glob).
type Leaf = (Vec<String>, Option<(String, String)>);
/// Per module: name -> what it names, and whether it is exported (`pub`) there.
type Names = BTreeMap<String, BTreeMap<Target, bool>>;
/// The tree with its names resolved: each item's and module's shortest public path.
#[derive(Default)]
struct Crate {
    name: String,
    mods: Vec<Mod>,
    defs: Vec<Def>,
    names: Vec<Names>,
    modpath: Vec<Option<Vec<String>>>,
    defpath: Vec<Option<Vec<String>>>,
}
/// Where a function is; its parts; the parameters and return a std trait fixes (`FromStr`).
type At<'a> = (usize, Option<&'a syn::ItemImpl>);
type FnRef<'a> = (&'a syn::Signature, &'a [Attribute], &'a syn::Block);
type Fixed = (Option<Vec<(String, Ty)>>, Option<Ty>);
const OPS: &str = "Add Sub Mul Div Rem BitAnd BitOr BitXor Shl Shr Neg Not";
/// Records that `n` names `t` (exported there if `vis`); whether that is new.
fn set(names: &mut Names, n: &str, t: Target, vis: bool) -> bool {
    let ts = names.entry(n.to_string()).or_default();
    let new = ts.get(&t).is_none_or(|old| !old && vis);
    if new {
        ts.insert(t, vis);
    }
    new
}
fn left(api: &mut Api, item: String, why: &str) {
    let why = why.to_string();
    api.left_out.push(LeftOut { item, why });
}

impl Crate {
    fn new(name: String, mods: Vec<Mod>) -> Crate {
        let mut c = Crate {
            name,
            ..Crate::default()
        };
        (c.names, c.modpath) = (vec![Names::new(); mods.len()], vec![None; mods.len()]);
        let mut uses = Vec::new();
        for (m, md) in mods.iter().enumerate() {
            if let (Some(p), Some(last)) = (md.parent, md.segs.last()) {
                set(&mut c.names[p], last, Target::Mod(m), md.vis);
            }
            for (item, it) in md.items.iter().enumerate() {
                let (ident, vis) = match it {
                    Item::Fn(f) => (&f.sig.ident, &f.vis),
                    Item::Struct(s) => (&s.ident, &s.vis),
                    Item::Enum(e) => (&e.ident, &e.vis),
                    Item::Type(t) => (&t.ident, &t.vis),
                    Item::Union(u) => (&u.ident, &u.vis),
                    Item::Trait(t) => (&t.ident, &t.vis),
                    Item::Use(u) => {
                        let mut leaves = Vec::new();
                        use_leaves(&u.tree, &mut Vec::new(), &mut leaves);
                        uses.extend(leaves.into_iter().map(|l| (m, is_pub(&u.vis), l)));
                        continue;
                    }
                    _ => continue,
                };
                let (module, name, d) = (m, ident.to_string(), Target::Def(c.defs.len()));
                set(&mut c.names[m], &name, d, is_pub(vis));
                c.defs.push(Def { module, item, name });
            }
        }
        (c.mods, c.defpath) = (mods, vec![None; c.defs.len()]);
        let step = |c: &mut Crate| uses.iter().filter(|u| c.import(u) == Some(true)).count();
        while step(&mut c) > 0 {}
        c.modpath[0] = Some(vec![c.name.clone()]);
        while c.spread() {}
        c
    }
    /// Adds a `use` leaf's names to its module; whether anything was new.
    fn import(&mut self, (m, vis, (prefix, leaf)): &(usize, bool, Leaf)) -> Option<bool> {
        let at = self.resolve_mod(*m, prefix)?;
        let mut found: Vec<(String, Target, bool)> = Vec::new();
        for (n, ts) in &self.names[at] {
            let alias = match leaf {
                Some((name, alias)) if name == n => alias,
                Some(_) => continue,
                None => n,
            };
            found.extend(ts.iter().map(|(t, v)| (alias.clone(), *t, *v)));
        }
        if let Some((_, alias)) = leaf.as_ref().filter(|(n, _)| n == "self") {
            found.push((alias.clone(), Target::Mod(at), self.mods[at].vis));
        }
        let ns = &mut self.names[*m];
        let new = found.iter().filter(|(n, t, v)| set(ns, n, *t, *vis && *v));
        Some(new.count() > 0)
    }
    /// Gives what each reachable module exports its path plus the name, when that is shorter.
    fn spread(&mut self) -> bool {
        let mut changed = false;
        for (m, base) in self.modpath.clone().into_iter().enumerate() {
            let Some(base) = base else { continue };
            for (n, ts) in &self.names[m] {
                for (t, _) in ts.iter().filter(|(_, vis)| **vis) {
                    let path = [base.clone(), vec![n.clone()]].concat();
                    let slot = match t {
                        Target::Def(d) => &mut self.defpath[*d],
                        Target::Mod(x) => &mut self.modpath[*x],
                    };
                    let key = |p: &Vec<String>| (p.len(), p.clone());
                    if slot.as_ref().is_none_or(|s| key(&path) < key(s)) {
                        (*slot, changed) = (Some(path), true);
                    }
                }
            }
        }
        changed
    }
    /// The module `segs` (`crate`, `self`, `super`, names in scope) lead to from module `m`.
    fn resolve_mod(&self, m: usize, segs: &[String]) -> Option<usize> {
        let mut at = m;
        for (k, s) in segs.iter().enumerate() {
            at = match s.as_str() {
                "crate" if k == 0 => 0,
                "self" => at,
                "super" => self.mods[at].parent?,
                _ => *only!(self.names[at].get(s)?.keys(), Target::Mod).next()?,
            };
        }
        Some(at)
    }
    /// The crate item `path` names in module `m` that `want` accepts.
    fn find(&self, m: usize, path: &syn::Path, want: fn(&Item) -> bool) -> Option<usize> {
        let segs: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        let (last, prefix) = segs.split_last()?;
        let targets = self.names[self.resolve_mod(m, prefix)?].get(last)?.keys();
        only!(targets, Target::Def)
            .copied()
            .find(|d| want(self.item(*d)))
    }
    fn item(&self, d: usize) -> &Item {
        &self.mods[self.defs[d].module].items[self.defs[d].item]
    }
    fn path(&self, d: usize) -> Option<String> {
        self.defpath[d].as_ref().map(|p| p.join("::"))
    }

    fn api(&self) -> Api {
        let mut api = Api {
            crate_name: self.name.clone(),
            ..Api::default()
        };
        for (m, md) in self.mods.iter().enumerate() {
            let (path, file, public) = (md.segs.join("::"), md.file.clone(), md.public);
            api.modules.push(Module { path, file, public });
            if let Some(p) = &self.modpath[m] {
                examples(&mut api, &md.file, &p.join("::"), &md.docs);
            }
            for mac in only!(md.items.iter(), Item::Macro) {
                if let (true, Some(id)) = (has(&mac.attrs, "macro_export"), &mac.ident) {
                    left(&mut api, format!("{}::{id}", self.name), "macro");
                }
            }
        }
        for (d, def) in self.defs.iter().enumerate() {
            let Some(path) = self.path(d) else { continue };
            match self.item(d) {
                Item::Fn(f) => {
                    let parts = (&f.sig, &f.attrs[..], &*f.block);
                    self.offer(&mut api, (def.module, None), parts, path, (None, None));
                }
                Item::Trait(t) => {
                    api.implementors.insert(def.name.clone(), Vec::new());
                    examples(&mut api, &self.mods[def.module].file, &path, &t.attrs);
                }
                item => {
                    let decl = self.type_decl(d, item, path);
                    if let Some(decl) = decl.filter(|t| !api.types.contains_key(&t.name)) {
                        examples(&mut api, &decl.file, &decl.path, item_attrs(item));
                        api.types.insert(decl.name.clone(), decl);
                    }
                }
            }
        }
        for (m, md) in self.mods.iter().enumerate() {
            for imp in only!(md.items.iter(), Item::Impl) {
                self.impl_block(&mut api, m, imp);
            }
        }
        for list in api.implementors.values_mut() {
            list.sort();
            list.dedup();
        }
        api.callables.sort_by_key(|c| (c.file.clone(), c.lines.0));
        api.examples.sort_by_key(|e| (e.file.clone(), e.line));
        (api.strings, api.ints) = self.literals();
        api
    }
    fn type_decl(&self, d: usize, item: &Item, path: String) -> Option<TypeDecl> {
        let (attrs, generics) = match item {
            Item::Struct(s) => (&s.attrs, &s.generics),
            Item::Enum(e) => (&e.attrs, &e.generics),
            Item::Type(t) => (&t.attrs, &t.generics),
            Item::Union(u) => (&u.attrs, &u.generics),
            _ => return None,
        };
        let generics = generics_of(&[generics]);
        let names = names_of(&generics);
        let kind = match item {
            Item::Struct(s) => {
                let (fields, tuple) = fields(&s.fields, &names, false);
                TypeKind::Struct { fields, tuple }
            }
            Item::Enum(e) => {
                let vs = e.variants.iter().filter(|v| !cfg_off(&v.attrs));
                let variants = vs.map(|v| {
                    let (fields, tuple) = fields(&v.fields, &names, true);
                    let name = v.ident.to_string();
                    super::model::Variant {
                        name,
                        fields,
                        tuple,
                    }
                });
                let variants = variants.collect();
                TypeKind::Enum { variants }
            }
            Item::Type(t) => TypeKind::Alias(paramize(Ty::of(&t.ty), &names)),
            _ => TypeKind::Other,
        };
        let def = &self.defs[d];
        Some(TypeDecl {
            name: def.name.clone(),
            path,
            file: self.mods[def.module].file.clone(),
            kind,
            generics,
            traits: derives(attrs),
            non_exhaustive: has(attrs, "non_exhaustive"),
        })
    }

    /// An impl block: its self type's traits, the crate traits' implementors, the callables.
    fn impl_block(&self, api: &mut Api, m: usize, imp: &syn::ItemImpl) -> Option<()> {
        let syn::Type::Path(self_ty) = &*imp.self_ty else {
            return None;
        };
        let self_path = &self_ty.path;
        let (last, at) = (self_path.segments.last()?, (m, Some(imp)));
        let tname = last.ident.to_string();
        let tr = imp.trait_.as_ref().filter(|t| t.0.is_none()).map(|t| &t.1);
        let own = tr.and_then(|p| self.find(m, p, |i| matches!(i, Item::Trait(_))));
        let own = own.filter(|t| self.defpath[*t].is_some());
        if let Some(t) = own.filter(|_| !imp.generics.type_params().any(|p| p.ident == tname)) {
            let key = self.defs[t].name.clone();
            api.implementors.entry(key).or_default().push(tname);
        }
        let fns = only!(imp.items.iter(), ImplItem::Fn).filter(|f| !skipped(&f.attrs));
        let fns = fns.map(|f| (f, (&f.sig, &f.attrs[..], &f.block)));
        // The crate's trait on a primitive or `str` (`impl ToSnakeCase for str`): its API.
        let prim = Ty::of(&imp.self_ty);
        let primitive = matches!(
            prim,
            Ty::Str | Ty::String | Ty::Int(_) | Ty::Float(_) | Ty::Bool | Ty::Char
        );
        if let (Some(t), true) = (own, primitive) {
            let (trait_path, spelled) = (self.path(t)?, prim.rust("")?);
            for (f, parts) in fns {
                let path = format!("<{spelled} as {trait_path}>::{}", f.sig.ident);
                self.offer(api, at, parts, path, (None, None));
            }
            return None;
        }
        let is_type = |i: &Item| matches!(i, Item::Struct(_) | Item::Enum(_) | Item::Type(_));
        let d = self.find(m, self_path, is_type)?;
        let type_path = self.path(d)?;
        let seg = tr.and_then(|p| p.segments.last());
        let (tn, name) = (seg.map(|s| s.ident.to_string()), &self.defs[d].name);
        let decl = api.types.get_mut(name).filter(|t| t.path == type_path);
        if let (Some(t), Some(decl)) = (&tn, decl) {
            decl.traits.insert(t.clone());
        }
        let (Some(seg), Some(tn)) = (seg, tn) else {
            for (f, parts) in fns.filter(|(f, _)| is_pub(&f.vis)) {
                let path = format!("{type_path}::{}", f.sig.ident);
                self.offer(api, at, parts, path, (None, None));
            }
            return None;
        };
        let qself = match args_of(last).len() {
            0 => type_path,
            n => format!("{type_path}<{}>", vec!["_"; n].join(", ")),
        };
        let (params, assoc) = (names_of(&generics_of(&[&imp.generics])), assoc_of(imp));
        let ty = |t: &syn::Type| paramize(Ty::of(t), &params);
        let args: Vec<Ty> = args_of(seg).into_iter().map(ty).collect();
        // The trait's arguments as code outside the crate spells them (crate types by path).
        let named = |n: &str| Some(Ty::Named(api.types.get(n)?.path.clone(), Vec::new()));
        let spell = |t: &Ty| t.substitute(&Ty::SelfType, &named).rust(&qself);
        let spelled: Option<Vec<String>> = args.iter().map(spell).collect();
        let out = |n: &str| Some(ty(&syn::parse_str::<syn::Type>(assoc.get(n)?).ok()?));
        let (base, method, fixed) = match (own, tn.as_str()) {
            (Some(t), _) => (self.path(t)?, String::new(), (None, None)),
            (None, "FromStr") => {
                let ret = out("Err").map(|e| Ty::Result(Box::new(ty(&imp.self_ty)), Box::new(e)));
                let fixed = (
                    Some(vec![("s".into(), Ty::Ref(Box::new(Ty::Str), false))]),
                    ret,
                );
                (format!("std::str::{tn}"), "from_str".into(), fixed)
            }
            (None, "From") if !args.is_empty() => (tn.clone(), "from".into(), (None, None)),
            (None, "TryFrom") if !args.is_empty() => (tn.clone(), "try_from".into(), (None, None)),
            (None, "Default") => (tn.clone(), "default".into(), (None, None)),
            (None, op) if OPS.split(' ').any(|o| o == op) => {
                let mut rhs = vec![("rhs".into(), args.first().cloned().unwrap_or(Ty::SelfType))];
                rhs.truncate(usize::from(!matches!(op, "Neg" | "Not")));
                let fixed = (Some(rhs), out("Output"));
                (format!("std::ops::{op}"), op.to_lowercase(), fixed)
            }
            _ => return None,
        };
        let trait_path = match spelled?.join(", ") {
            a if a.is_empty() => base,
            a => format!("{base}<{a}>"),
        };
        for (f, parts) in fns.filter(|(f, _)| method.is_empty() || f.sig.ident == method) {
            let path = format!("<{qself} as {trait_path}>::{}", f.sig.ident);
            self.offer(api, at, parts, path, fixed.clone());
        }
        Some(())
    }

    /// Adds the function as a callable, or as left out with why.
    fn offer(&self, api: &mut Api, (m, imp): At, f: FnRef, path: String, fixed: Fixed) {
        let (sig, attrs, body) = f;
        let receiver = match (sig.unsafety, sig.asyncness, &sig.abi, receiver(sig)) {
            (Some(_), ..) => return left(api, path, "unsafe fn"),
            (_, Some(_), ..) => return left(api, path, "async fn"),
            (_, _, Some(_), _) => return left(api, path, "extern fn"),
            (.., None) => return left(api, path, "its receiver is not self, &self or &mut self"),
            (.., Some(receiver)) => receiver,
        };
        let gens: Vec<&syn::Generics> = imp.map(|i| &i.generics).into_iter().collect();
        let generics = generics_of(&[gens, vec![&sig.generics]].concat());
        let (names, assoc) = (names_of(&generics), imp.map(assoc_of).unwrap_or_default());
        let ty = |t: &syn::Type| paramize(Ty::of(&with_assoc(t, &assoc)), &names);
        let name = |p: &syn::Pat, k| match p {
            syn::Pat::Ident(p) => p.ident.to_string(),
            _ => format!("arg{k}"),
        };
        let typed = sig.inputs.iter().enumerate().filter_map(|(k, a)| match a {
            FnArg::Typed(pt) => Some((name(&pt.pat, k), ty(&pt.ty))),
            FnArg::Receiver(_) => None,
        });
        let ret = match &sig.output {
            syn::ReturnType::Default => Ty::Unit,
            syn::ReturnType::Type(_, t) => ty(t),
        };
        let trait_ = imp.and_then(|i| i.trait_.as_ref()?.1.segments.last());
        let (md, start) = (&self.mods[m], line(sig.span()) as u32);
        let lines = (start, line(body.brace_token.span.close()) as u32);
        examples(api, &md.file, &path, attrs);
        api.callables.push(Callable {
            file: md.file.clone(),
            module: md.segs.join("::"),
            name: sig.ident.to_string(),
            owner: imp.map(|i| ty(&i.self_ty)),
            path,
            receiver,
            params: fixed.0.unwrap_or_else(|| typed.collect()),
            ret: fixed.1.unwrap_or(ret),
            generics,
            lines,
            documents_panics: documents_panics(attrs),
            doc: doc_lines(attrs)
                .into_iter()
                .map(|(_, l)| l)
                .collect::<Vec<_>>()
                .join("\n"),
            via_trait: trait_.map(|s| s.ident.to_string()),
        });
    }
    /// The literals of the source: the 200 shortest strings, the 200 smallest integers.
    fn literals(&self) -> (Vec<String>, Vec<i128>) {
        let (mut strings, mut ints) = (BTreeSet::new(), BTreeSet::new());
        for item in self.mods.iter().flat_map(|m| &m.items) {
            if !matches!(item, Item::Mod(_)) {
                scan(item.to_token_stream(), &mut strings, &mut ints);
            }
        }
        let strings = cap(strings, |s| (s.len(), s.clone()));
        (strings, cap(ints, |i| (i.unsigned_abs(), *i)))
    }
}

fn cap<T: Ord, K: Ord>(set: BTreeSet<T>, key: impl Fn(&T) -> K) -> Vec<T> {
    let mut list: Vec<T> = set.into_iter().collect();
    list.sort_by_key(key);
    list.truncate(200);
    list.sort();
    list
}

/// The literals of the tokens, attributes (`#[..]`, `#![..]`: docs) left out.
fn scan(ts: TokenStream, strings: &mut BTreeSet<String>, ints: &mut BTreeSet<i128>) {
    let mut attr = false;
    for tt in ts {
        let pound =
            matches!(&tt, TokenTree::Punct(p) if p.as_char() == '#' || attr && p.as_char() == '!');
        match tt {
            TokenTree::Group(g) if attr && g.delimiter() == Delimiter::Bracket => {}
            TokenTree::Group(g) => scan(g.stream(), strings, ints),
            TokenTree::Literal(l) => match syn::Lit::new(l) {
                syn::Lit::Str(s) => {
                    let v = s.value();
                    let plain = !v.chars().any(|c| c.is_control() && c != '\t');
                    strings.extend(Some(v).filter(|v| plain && v.chars().count() <= 64));
                }
                syn::Lit::Int(i) => ints.extend(i.base10_parse::<i128>().ok()),
                _ => {}
            },
            _ => {}
        }
        attr = pound;
    }
}

fn is_pub(v: &syn::Visibility) -> bool {
    matches!(v, syn::Visibility::Public(_))
}
fn has(attrs: &[Attribute], name: &str) -> bool {
    attrs.iter().any(|a| a.path().is_ident(name))
}
macro_rules! attrs_of {
    ($item:expr; $($v:ident),*) => { match $item { $(Item::$v(i) => &i.attrs,)* _ => &[] } };
}
fn item_attrs(item: &Item) -> &[Attribute] {
    attrs_of!(item; Const, Enum, ExternCrate, Fn, ForeignMod, Impl, Macro, Mod, Static, Struct,
        Trait, TraitAlias, Type, Union, Use)
}
/// The string of a `name = "..."` attribute.
/// An impl's associated types (`type Err = E;`): name -> the type as written.
fn assoc_of(imp: &syn::ItemImpl) -> BTreeMap<String, String> {
    let pair = |t: &syn::ImplItemType| (t.ident.to_string(), t.ty.to_token_stream().to_string());
    only!(imp.items.iter(), ImplItem::Type).map(pair).collect()
}

/// Left out: cfg'd away on a Linux build without tests, or `#[doc(hidden)]`.
fn skipped(attrs: &[Attribute]) -> bool {
    let hidden = |a: &Attribute| match &a.meta {
        Meta::List(l) if l.path.is_ident("doc") => l.tokens.to_string().trim() == "hidden",
        _ => false,
    };
    cfg_off(attrs) || attrs.iter().any(hidden)
}
fn cfg_off(attrs: &[Attribute]) -> bool {
    let cfgs = attrs.iter().filter(|a| a.path().is_ident("cfg"));
    cfgs.filter_map(|a| a.parse_args::<Meta>().ok())
        .any(|m| cfg_value(&m) < 0)
}
/// A cfg predicate on a Linux build without tests or docs: 1 true, -1 false, 0 it depends.
fn cfg_value(m: &Meta) -> i8 {
    let key = m.path().to_token_stream().to_string();
    let os = [("target_os", "linux"), ("target_family", "unix")];
    match m {
        Meta::Path(_) if key == "unix" => 1,
        Meta::Path(_) if ["test", "doc", "doctest", "miri", "windows"].contains(&&*key) => -1,
        Meta::NameValue(_) => match os.iter().find(|(k, _)| *k == key) {
            Some((_, want)) if str_lit(m, &key).as_deref() == Some(want) => 1,
            Some(_) => -1,
            None => 0,
        },
        Meta::List(l) => {
            let list = l.parse_args_with(Punctuated::<Meta, Token![,]>::parse_terminated);
            let mut vals = list.iter().flatten().map(cfg_value);
            match key.as_str() {
                "not" => -vals.next().unwrap_or(0),
                "all" => vals.min().unwrap_or(1),
                "any" => vals.max().unwrap_or(-1),
                _ => 0,
            }
        }
        Meta::Path(_) => 0,
    }
}
fn use_leaves(tree: &syn::UseTree, prefix: &mut Vec<String>, out: &mut Vec<Leaf>) {
    let (name, alias) = match tree {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            use_leaves(&p.tree, prefix, out);
            prefix.pop();
            return;
        }
        syn::UseTree::Group(g) => return g.items.iter().for_each(|t| use_leaves(t, prefix, out)),
        syn::UseTree::Glob(_) => return out.push((prefix.clone(), None)),
        syn::UseTree::Name(n) if n.ident == "self" => (n.ident.to_string(), prefix.last().cloned()),
        syn::UseTree::Name(n) => (n.ident.to_string(), Some(n.ident.to_string())),
        syn::UseTree::Rename(r) => (r.ident.to_string(), Some(r.rename.to_string())),
    };
    if let Some(alias) = alias.filter(|a| a != "_") {
        out.push((prefix.clone(), Some((name, alias))));
    }
}
fn args_of(seg: &syn::PathSegment) -> Vec<&syn::Type> {
    let syn::PathArguments::AngleBracketed(a) = &seg.arguments else {
        return vec![];
    };
    only!(a.args.iter(), syn::GenericArgument::Type).collect()
}
/// The type with the named generic parameters as `Ty::Param`.
fn paramize(ty: Ty, names: &BTreeSet<String>) -> Ty {
    let param = |n: &str| names.contains(n).then(|| Ty::Param(n.to_string()));
    ty.substitute(&Ty::SelfType, &param)
}
fn names_of(generics: &[(String, Vec<Bound>)]) -> BTreeSet<String> {
    generics.iter().map(|g| g.0.clone()).collect()
}

/// Type parameters with their bounds (where clauses merged), the parameters as `Ty::Param`.
fn generics_of(gs: &[&syn::Generics]) -> Vec<(String, Vec<Bound>)> {
    let bounds = |bs: &Punctuated<syn::TypeParamBound, Token![+]>| -> Vec<Bound> {
        let traits = only!(bs.iter(), syn::TypeParamBound::Trait);
        let traits = traits.filter(|t| t.modifier == syn::TraitBoundModifier::None);
        traits.map(|t| Bound::of(&t.path)).collect()
    };
    let params = gs.iter().flat_map(|g| g.type_params());
    let out = params.map(|p| (p.ident.to_string(), bounds(&p.bounds)));
    let mut out: Vec<_> = out.collect();
    let wheres = gs.iter().filter_map(|g| g.where_clause.as_ref());
    let preds = wheres.flat_map(|w| &w.predicates);
    for pt in only!(preds, syn::WherePredicate::Type) {
        let name = pt.bounded_ty.to_token_stream().to_string();
        if let Some(slot) = out.iter_mut().find(|(n, _)| *n == name) {
            slot.1.extend(bounds(&pt.bounds));
        }
    }
    let names = names_of(&out);
    for b in out.iter_mut().flat_map(|g| &mut g.1) {
        b.args = b.args.drain(..).map(|a| paramize(a, &names)).collect();
        b.output = b.output.take().map(|o| Box::new(paramize(*o, &names)));
    }
    out
}
fn fields(fs: &syn::Fields, names: &BTreeSet<String>, all_pub: bool) -> (Vec<Field>, bool) {
    let list = fs.iter().filter(|f| !cfg_off(&f.attrs)).map(|f| Field {
        name: f.ident.as_ref().map(ToString::to_string),
        ty: paramize(Ty::of(&f.ty), names),
        public: all_pub || is_pub(&f.vis),
    });
    (list.collect(), matches!(fs, syn::Fields::Unnamed(_)))
}
fn derives(attrs: &[Attribute]) -> BTreeSet<String> {
    let derive = attrs.iter().filter(|a| a.path().is_ident("derive"));
    let list =
        |a: &Attribute| a.parse_args_with(Punctuated::<syn::Path, Token![,]>::parse_terminated);
    let paths = derive.filter_map(|a| list(a).ok()).flatten();
    let last = |p: syn::Path| Some(p.segments.last()?.ident.to_string());
    paths.filter_map(last).collect()
}
fn receiver(sig: &syn::Signature) -> Option<Receiver> {
    match sig.receiver().map(|r| Ty::of(&r.ty)) {
        None => Some(Receiver::None),
        Some(Ty::SelfType) => Some(Receiver::Value),
        Some(Ty::Ref(t, true)) if *t == Ty::SelfType => Some(Receiver::RefMut),
        Some(Ty::Ref(t, false)) if *t == Ty::SelfType => Some(Receiver::Ref),
        _ => None,
    }
}

/// The type with `Self::X` and `<Self as T>::X` replaced by the impl's `type X`.
fn with_assoc(t: &syn::Type, assoc: &BTreeMap<String, String>) -> syn::Type {
    static RE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"(?:\bSelf|< Self as [^<>]*(?:<[^<>]*>)? >) :: (\w+)\b").unwrap()
    });
    let text = t.to_token_stream().to_string();
    let sub = |c: &regex::Captures| assoc.get(&c[1]).cloned().unwrap_or(c[0].to_string());
    syn::parse_str(&RE.replace_all(&text, sub)).unwrap_or_else(|_| t.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A crate named `geo-kit`: each `=== path` line starts a file.
    const CRATE: &str = r#"=== src/lib.rs
//! ```
//! # use geo_kit::Point;
//! let p = Point::origin();
//! ```
mod shapes; mod missing; pub mod units; #[path = "extra/more.rs"] pub mod more;
pub use shapes::{Point, Stack as Pile}; pub use units::*;
#[cfg(test)] mod tests { pub fn in_tests() {} }
/// # Panics
/// ```ignore
/// nope();
/// ```
/// ```rust,edition2021
/// ## not hidden
/// #
/// assert_eq!(geo_kit::count("a"), 1);
/// ```
pub fn count(s: &str) -> usize { if s.is_empty() { panic!("empty input") } s.len() + 42 }
pub trait Shape { fn area(&self) -> f64; }
=== src/shapes.rs
#[derive(Debug, Clone, PartialEq)] pub struct Point { pub x: i64, y: i64 }
pub struct Stack<T> { items: Vec<T> }
impl Point { pub fn origin() -> Self { Point { x: 0, y: 0 } } fn private(&self) {} }
impl Point { pub fn shift(&mut self, by: i64) { self.x += by; } pub unsafe fn raw(&self) {} }
impl<T: Clone> Stack<T> { pub fn push(&mut self, item: T) where T: std::fmt::Debug {} }
impl<T> Default for Stack<T> { fn default() -> Self { Stack { items: Vec::new() } } }
impl std::ops::Add for Point { type Output = Point; fn add(self, o: Self) -> Self { o } }
impl std::str::FromStr for Point {
    type Err = std::num::ParseIntError;
    fn from_str(s: &str) -> Result<Self, Self::Err> { Ok(Point { x: s.parse()?, y: 0 }) }
}
impl crate::Shape for Point { fn area(&self) -> f64 { 0.0 } }
impl std::fmt::Display for Point { fn fmt(&self, _: &mut std::fmt::Formatter) -> std::fmt::Result {
    Ok(()) } }
=== src/units.rs
pub struct Meters(pub f64); pub(crate) fn helper() {}
pub mod inner { pub fn twice(x: u32) -> u32 { x * 2 } }
=== src/extra/more.rs
pub fn more() -> Option<u8> { None } #[cfg(windows)] pub fn on_windows() {}
#[doc(hidden)] pub fn hidden() {}
"#;

    /// What `summary` gives for `CRATE`.
    const WANT: &str = r##"
mod "" src/lib.rs true
mod "shapes" src/shapes.rs false
mod "units" src/units.rs true
mod "units::inner" src/units.rs true
mod "more" src/extra/more.rs true
type geo_kit::Meters {}
type geo_kit::Point {"Add", "Clone", "Debug", "Display", "FromStr", "PartialEq", "Shape"}
type geo_kit::Pile {"Default"}
fn geo_kit::more::more None() -> Option<u8> []
fn geo_kit::count None(s: &str) -> usize [] panics
fn geo_kit::Point::origin None() -> Self []
fn geo_kit::Point::shift RefMut(by: i64) -> () []
fn geo_kit::Pile::push RefMut(item: Param("T")) -> () [("T", ["Clone", "Debug"])]
fn <geo_kit::Pile<_> as Default>::default None() -> Self [("T", [])]
fn <geo_kit::Point as std::ops::Add>::add Value(rhs: Self) -> Point []
fn <geo_kit::Point as std::str::FromStr>::from_str None(s: &str) -> Result<Point, ParseIntError> []
fn <geo_kit::Point as geo_kit::Shape>::area Ref() -> f64 []
fn geo_kit::inner::twice None(x: u32) -> u32 []
left out geo_kit::Point::raw: unsafe fn
Shape is implemented by ["Point"]
example of geo_kit at 2: "use geo_kit::Point;\nlet p = Point::origin();"
example of geo_kit::count at 13: "# not hidden\n\nassert_eq!(geo_kit::count(\"a\"), 1);""##;

    fn discover_in(files: &str) -> Result<Api, ApiError> {
        let dir = tempfile::tempdir().unwrap();
        let manifest = "[package]\nname = \"geo-kit\"\n";
        std::fs::write(dir.path().join("Cargo.toml"), manifest).unwrap();
        for (path, text) in files.split("=== ").filter_map(|f| f.split_once('\n')) {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        discover(dir.path())
    }

    /// The API as lines: modules, types, callables, left out, implementors, examples.
    fn summary(api: &Api) -> String {
        let spell = |t: &Ty| t.rust("Self").unwrap_or_else(|| format!("{t:?}"));
        let mut out = vec![String::new()];
        for m in &api.modules {
            out.push(format!("mod {:?} {} {}", m.path, m.file, m.public));
        }
        for t in api.types.values() {
            out.push(format!("type {} {:?}", t.path, t.traits));
        }
        for c in &api.callables {
            let params = c.params.iter().map(|(n, t)| format!("{n}: {}", spell(t)));
            let params = params.collect::<Vec<_>>().join(", ");
            let bounds = |b: &[Bound]| b.iter().map(|b| b.name.clone()).collect::<Vec<_>>();
            let generics: Vec<_> = c.generics.iter().map(|(n, b)| (n, bounds(b))).collect();
            let (path, receiver, ret) = (&c.path, c.receiver, spell(&c.ret));
            let sig = format!("{receiver:?}({params}) -> {ret}");
            let panics = if c.documents_panics { " panics" } else { "" };
            out.push(format!("fn {path} {sig} {generics:?}{panics}"));
        }
        for l in &api.left_out {
            out.push(format!("left out {}: {}", l.item, l.why));
        }
        for (t, by) in &api.implementors {
            out.push(format!("{t} is implemented by {by:?}"));
        }
        for e in &api.examples {
            out.push(format!("example of {} at {}: {:?}", e.item, e.line, e.code));
        }
        out.join("\n")
    }

    #[test]
    fn public_paths_follow_re_exports_and_trait_impls_are_callables() {
        let api = discover_in(CRATE).unwrap();
        assert_eq!(summary(&api), WANT);
        let push = api.callables.iter().find(|c| c.name == "push").unwrap();
        let stack = Ty::Named("Stack".into(), vec![Ty::Param("T".into())]);
        assert_eq!(push.owner, Some(stack));
        let meters = &api.types["Meters"].kind;
        assert!(matches!(meters, TypeKind::Struct { tuple: true, .. }));
        assert!(api.strings.contains(&"empty input".to_string()) && api.ints.contains(&42));
        // A file that does not parse is named.
        let err = discover_in("=== src/lib.rs\npub mod bad;\n=== src/bad.rs\nfn (\n").unwrap_err();
        assert!(matches!(&err, ApiError::Parse(file, 1, _) if file == "src/bad.rs"));
        assert!(err.to_string().starts_with("src/bad.rs does not parse"));
    }
}
