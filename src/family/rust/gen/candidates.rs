//! Candidate calls: for each callable, its inputs varied one parameter at a time from a base of
//! boundary values, then seeded combinations; for each type with `&mut self` methods (L2),
//! sequences that construct a value, call methods on it and observe it; the crate's doc
//! examples as they are written. Each candidate says what to observe after the call.

use super::inputs::{instantiate, satisfying, turbofish, Inputs, Rng, Value};
use super::model::{Api, Callable, Example, Receiver, TypeKind};
use super::probe::{Candidate, Source};
use super::ty::Ty;

/// How many getters and fields of a result are observed.
const MAX_GETTERS: usize = 6;

/// A callable made concrete: the receiver's type, parameter and return types.
pub struct Concrete {
    pub owner: Option<Ty>,
    pub params: Vec<Ty>,
    pub ret: Ty,
}

/// The callable with every generic parameter chosen (None with why, when one cannot be).
pub fn concrete(c: &Callable, api: &Api) -> Result<Concrete, &'static str> {
    let owner = match &c.owner {
        Some(Ty::Named(name, args)) => {
            let decl = api.ty(name);
            let args: Option<Vec<Ty>> = args
                .iter()
                .enumerate()
                .map(|(i, a)| match a {
                    Ty::Param(_) => {
                        let bounds = decl
                            .and_then(|d| d.generics.get(i))
                            .map(|(_, b)| b.clone())
                            .unwrap_or_default();
                        satisfying(&bounds, api)
                    }
                    other => Some(other.clone()),
                })
                .collect();
            Some(Ty::Named(
                name.clone(),
                args.ok_or("no simple type meets the bounds of its type's generic parameters")?,
            ))
        }
        // A crate trait's method on a primitive or `str`.
        Some(t @ (Ty::Str | Ty::String | Ty::Int(_) | Ty::Float(_) | Ty::Bool | Ty::Char)) => {
            Some(t.clone())
        }
        Some(_) => return Err("its type is not a named type of the crate"),
        None => None,
    };
    let me = owner.clone().unwrap_or(Ty::Unit);
    let (params, ret) = instantiate(c, &me, api)
        .ok_or("no simple type meets the bounds of its generic parameters")?;
    let params: Vec<Ty> = params.iter().map(|t| api.unalias(t)).collect();
    let ret = api.unalias(&ret);
    // An iterator is observed by what it yields.
    let ret = match ret {
        Ty::Impl(b) if b.iter().any(|b| b.name == "Iterator") => {
            let item = b
                .iter()
                .find_map(|b| b.output.as_deref().cloned())
                .unwrap_or(Ty::Other("an iterator".into()));
            Ty::Named("Collected".into(), vec![item])
        }
        t => t,
    };
    Ok(Concrete { owner, params, ret })
}

pub struct Maker<'a> {
    pub api: &'a Api,
    pub inputs: &'a Inputs<'a>,
    next: usize,
}

impl<'a> Maker<'a> {
    pub fn new(api: &'a Api, inputs: &'a Inputs<'a>, first_id: usize) -> Maker<'a> {
        Maker {
            api,
            inputs,
            next: first_id,
        }
    }

    fn id(&mut self) -> String {
        self.next += 1;
        format!("c_{:05}", self.next)
    }

    /// Up to `per_callable` calls of callable `index`. A first generation (`explore` false)
    /// takes the base (each parameter's first value), each receiver and each parameter through
    /// its first values with the others at the base, then random picks; a later one (`explore`)
    /// random picks only, which the base and its neighbours already tried.
    pub fn calls(
        &mut self,
        index: usize,
        per_callable: usize,
        explore: bool,
        rng: &mut Rng,
    ) -> Vec<Candidate> {
        let c = &self.api.callables[index];
        let Ok(k) = concrete(c, self.api) else {
            return Vec::new();
        };
        let receivers: Vec<Value> = match (&k.owner, c.receiver) {
            // `&self` of `str` is a `&str`: a string literal is the receiver's reference.
            (Some(Ty::Str), Receiver::Ref) => {
                self.inputs.values(&Ty::Ref(Box::new(Ty::Str), false), 12)
            }
            (Some(owner), r) if r != Receiver::None => self.inputs.values(owner, 12),
            _ => vec![Value {
                expr: String::new(),
                size: 0,
            }],
        };
        let values: Vec<Vec<Value>> = k.params.iter().map(|t| self.inputs.values(t, 12)).collect();
        if receivers.is_empty() || values.iter().any(Vec::is_empty) {
            return Vec::new();
        }
        // Picks: (receiver, one value index per parameter).
        let mut picks: Vec<(usize, Vec<usize>)> = Vec::new();
        if !explore {
            picks.push((0, vec![0; values.len()]));
            for r in 1..receivers.len() {
                picks.push((r, vec![0; values.len()]));
            }
            for (p, vs) in values.iter().enumerate() {
                for v in 1..vs.len().min(4) {
                    let mut pick = vec![0; values.len()];
                    pick[p] = v;
                    picks.push((0, pick));
                }
            }
        }
        for _ in 0..per_callable * 3 {
            picks.push((
                rng.below(receivers.len()),
                values.iter().map(|vs| rng.below(vs.len())).collect(),
            ));
        }
        let mut seen = std::collections::BTreeSet::new();
        let mut out = Vec::new();
        for (r, pick) in picks {
            if out.len() >= per_callable {
                break;
            }
            if !seen.insert((r, pick.clone())) {
                continue;
            }
            let args: Vec<&Value> = pick.iter().zip(&values).map(|(i, vs)| &vs[*i]).collect();
            out.push(self.call(index, &k, &receivers[r], &args));
        }
        out
    }

    fn call(&mut self, index: usize, k: &Concrete, receiver: &Value, args: &[&Value]) -> Candidate {
        let c = &self.api.callables[index];
        let mut setup = Vec::new();
        // An argument built by a call is bound first, by its parameter's name: a panic there
        // is the argument's, not the function's (and the test reads better).
        let mut names: Vec<String> = Vec::new();
        for (i, a) in args.iter().enumerate() {
            let built = a.expr.contains("::") && a.expr.contains('(');
            let name = c
                .params
                .get(i)
                .map(|(n, _)| n.trim_start_matches('_').to_string());
            let name = match name {
                Some(n)
                    if built
                        && !n.is_empty()
                        && n != "value"
                        && n != "receiver"
                        && !names.contains(&n) =>
                {
                    n
                }
                _ if built => format!("arg{i}"),
                _ => {
                    names.push(a.expr.clone());
                    continue;
                }
            };
            setup.push(format!("let {name} = {};", a.expr));
            names.push(name);
        }
        let list = names.join(", ");
        let call = match c.receiver {
            Receiver::None => match &k.owner {
                Some(owner) => format!("{}({list})", turbofish(&c.path, owner)),
                None => format!("{}({list})", c.path),
            },
            r => {
                let m = if r == Receiver::RefMut { "mut " } else { "" };
                setup.push(format!("let {m}receiver = {};", receiver.expr));
                let amp = match r {
                    Receiver::Ref if k.owner == Some(Ty::Str) => "",
                    Receiver::Ref => "&",
                    Receiver::RefMut => "&mut ",
                    _ => "",
                };
                match &c.via_trait {
                    None => format!("receiver.{}({list})", c.name),
                    Some(_) => {
                        let sep = if list.is_empty() { "" } else { ", " };
                        format!("{}({amp}receiver{sep}{list})", c.path)
                    }
                }
            }
        };
        let call = match &k.ret {
            Ty::Named(n, _) if n == "Collected" => format!("{call}.collect::<Vec<_>>()"),
            _ => call,
        };
        let ret = match &k.ret {
            Ty::Named(n, item) if n == "Collected" => Ty::Vec(Box::new(item[0].clone())),
            t => t.clone(),
        };
        setup.push(format!("let value = {call};"));
        let mut labels = Vec::new();
        if ret != Ty::Unit {
            self.observe("value", &ret, &mut labels);
        }
        if c.receiver == Receiver::RefMut {
            if let Some(owner) = &k.owner {
                self.observe("receiver", owner, &mut labels);
            }
        }
        let exprs = args
            .iter()
            .map(|a| a.expr.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        let shown = match c.receiver {
            Receiver::None => format!("{}({exprs})", short(&c.path)),
            _ => format!("{}.{}({exprs})", receiver.expr, c.name),
        };
        self.candidate(Source::Callable(index), setup, labels, shown, args)
    }

    fn candidate(
        &mut self,
        source: Source,
        setup: Vec<String>,
        labels: Vec<(String, Ty)>,
        call: String,
        args: &[&Value],
    ) -> Candidate {
        let observe = labels.iter().map(|(l, _)| observe_line(l)).collect();
        Candidate {
            id: self.id(),
            source,
            setup,
            observe,
            labels,
            size: args.iter().map(|a| a.size).sum(),
            call,
        }
    }

    /// The observations of a value: itself; inside an Ok, an Err or a Some; the public fields
    /// and getters of a crate type.
    fn observe(&self, label: &str, ty: &Ty, out: &mut Vec<(String, Ty)>) {
        out.push((label.to_string(), ty.clone()));
        if label != "value" && label != "receiver" {
            return;
        }
        match ty {
            Ty::Result(t, e) => {
                out.push(("ok".into(), (**t).clone()));
                self.members("ok", t, out);
                out.push(("error".into(), (**e).clone()));
            }
            Ty::Option(t) => {
                out.push(("some".into(), (**t).clone()));
                self.members("some", t, out);
            }
            t => self.members(label, t, out),
        }
    }

    /// Public fields and `&self` getters of a crate type with a simple result.
    fn members(&self, label: &str, ty: &Ty, out: &mut Vec<(String, Ty)>) {
        let Ty::Named(name, _) = ty else { return };
        let Some(decl) = self.api.ty(name) else {
            return;
        };
        let mut n = 0;
        if let TypeKind::Struct {
            fields,
            tuple: false,
        } = &decl.kind
        {
            for f in fields.iter().filter(|f| f.public && simple(&f.ty)) {
                if n < MAX_GETTERS {
                    out.push((
                        format!("{label}.{}", f.name.as_deref().unwrap_or("0")),
                        f.ty.clone(),
                    ));
                    n += 1;
                }
            }
        }
        for c in self.api.callables.iter().filter(|c| {
            c.receiver == Receiver::Ref
                && c.params.is_empty()
                && c.via_trait.is_none()
                && c.generics.is_empty()
                && matches!(&c.owner, Some(Ty::Named(o, _)) if o == name)
                && simple(&c.ret)
        }) {
            if n < MAX_GETTERS {
                out.push((format!("{label}.{}()", c.name), c.ret.clone()));
                n += 1;
            }
        }
    }

    /// L2: a value built by a constructor, one to three method calls on it, then the value
    /// and the last call's result observed.
    pub fn sequences(
        &mut self,
        scope: &std::collections::BTreeSet<&str>,
        per_type: usize,
        rng: &mut Rng,
    ) -> Vec<Candidate> {
        let mut out = Vec::new();
        let names: Vec<String> = self.api.types.keys().cloned().collect();
        for (index, name) in names.into_iter().enumerate() {
            let methods: Vec<(usize, Concrete)> = (0..self.api.callables.len())
                .filter(|i| {
                    let c = &self.api.callables[*i];
                    matches!(&c.owner, Some(Ty::Named(o, _)) if *o == name)
                        && matches!(c.receiver, Receiver::Ref | Receiver::RefMut)
                        && c.via_trait.is_none()
                        && scope.contains(c.file.as_str())
                })
                .filter_map(|i| Some((i, concrete(&self.api.callables[i], self.api).ok()?)))
                .collect();
            let Some(owner) = methods.first().and_then(|(_, k)| k.owner.clone()) else {
                continue;
            };
            let ctors = self.inputs.values(&owner, 8);
            if ctors.is_empty() {
                continue;
            }
            for _ in 0..per_type {
                let ctor = &ctors[rng.below(ctors.len())];
                let mut calls = Vec::new();
                let mut shown = vec![ctor.expr.clone()];
                let mut size = ctor.size;
                let steps = 1 + rng.below(3);
                let mut last: Option<(String, Ty)> = None;
                let mut mutates = false;
                for _ in 0..steps {
                    let (i, k) = &methods[rng.below(methods.len())];
                    let c = &self.api.callables[*i];
                    let args = self.random_args(&k.params, 8, rng);
                    let Some(args) = args else { continue };
                    let list = exprs(&args);
                    size += args.iter().map(|a| a.size).sum::<usize>();
                    mutates |= c.receiver == Receiver::RefMut;
                    shown.push(format!("{}({list})", c.name));
                    if let Some((call, _)) = last.take() {
                        calls.push(format!("let _ = {call};"));
                    }
                    last = Some((format!("receiver.{}({list})", c.name), k.ret.clone()));
                }
                let Some((call, ret)) = last else { continue };
                let m = if mutates { "mut " } else { "" };
                let mut setup = vec![format!("let {m}receiver = {};", ctor.expr)];
                setup.extend(calls);
                let mut labels = Vec::new();
                if ret != Ty::Unit && ret.is_closed() {
                    setup.push(format!("let value = {call};"));
                    self.observe("value", &ret, &mut labels);
                } else {
                    setup.push(format!("let _ = {call};"));
                }
                if mutates {
                    self.observe("receiver", &owner, &mut labels);
                }
                let sized = Value {
                    expr: String::new(),
                    size,
                };
                let shown = format!("{}, then {}", shown[0], shown[1..].join(", "));
                out.push(self.candidate(Source::Sequence(index), setup, labels, shown, &[&sized]));
            }
        }
        out
    }

    /// L2: a function's result passed on to another that takes its type (`f(g(x))`).
    pub fn chains(
        &mut self,
        scope: &std::collections::BTreeSet<&str>,
        limit: usize,
        rng: &mut Rng,
    ) -> Vec<Candidate> {
        let free: Vec<(usize, Concrete)> = (0..self.api.callables.len())
            .filter(|i| {
                let c = &self.api.callables[*i];
                c.receiver == Receiver::None && scope.contains(c.file.as_str())
            })
            .filter_map(|i| Some((i, concrete(&self.api.callables[i], self.api).ok()?)))
            .collect();
        let mut out = Vec::new();
        for (gi, g) in &free {
            if g.ret == Ty::Unit || !g.ret.is_closed() {
                continue;
            }
            for (fi, f) in &free {
                if out.len() >= limit {
                    return out;
                }
                let Some(first) = f.params.first() else {
                    continue;
                };
                let borrow = match first {
                    t if *t == g.ret => "",
                    Ty::Ref(t, false) if **t == g.ret => "&",
                    Ty::Ref(t, false) if **t == Ty::Str && g.ret == Ty::String => "&",
                    _ => continue,
                };
                let gv = self.random_args(&g.params, 8, rng);
                let fv = self.random_args(&f.params[1..], 8, rng);
                let (Some(gv), Some(fv)) = (gv, fv) else {
                    continue;
                };
                let (gc, fc) = (&self.api.callables[*gi], &self.api.callables[*fi]);
                let glist = gv
                    .iter()
                    .map(|v| v.expr.as_str())
                    .collect::<Vec<_>>()
                    .join(", ");
                let inner = format!("{}({glist})", gc.path);
                let mut args = vec![format!("{borrow}{inner}")];
                args.extend(fv.iter().map(|v| v.expr.clone()));
                let setup = vec![format!("let value = {}({});", fc.path, args.join(", "))];
                let mut labels = Vec::new();
                if f.ret != Ty::Unit && f.ret.is_closed() {
                    self.observe("value", &f.ret, &mut labels);
                }
                let shown = format!(
                    "{}({borrow}{}({glist}){})",
                    short(&fc.path),
                    short(&gc.path),
                    fv.iter()
                        .map(|v| format!(", {}", v.expr))
                        .collect::<String>()
                );
                let sizes: Vec<&Value> = gv.iter().chain(fv.iter()).collect();
                out.push(self.candidate(Source::Callable(*fi), setup, labels, shown, &sizes));
            }
        }
        out
    }

    /// L2: two functions that take the same arguments, called with the same ones and observed
    /// side by side (`levenshtein(a, b)` beside `osa_distance(a, b)`).
    pub fn pairs(
        &mut self,
        scope: &std::collections::BTreeSet<&str>,
        limit: usize,
        rng: &mut Rng,
    ) -> Vec<Candidate> {
        let free: Vec<(usize, Concrete)> = (0..self.api.callables.len())
            .filter(|i| {
                let c = &self.api.callables[*i];
                c.receiver == Receiver::None && scope.contains(c.file.as_str())
            })
            .filter_map(|i| Some((i, concrete(&self.api.callables[i], self.api).ok()?)))
            .filter(|(_, k)| !k.params.is_empty() && k.ret != Ty::Unit && k.ret.is_closed())
            .collect();
        let mut out = Vec::new();
        for (a, (fi, f)) in free.iter().enumerate() {
            for (gi, g) in free.iter().skip(a + 1) {
                if f.params != g.params || out.len() >= limit {
                    continue;
                }
                for _ in 0..3 {
                    let args = self.random_args(&f.params, 12, rng);
                    let Some(args) = args else { break };
                    let list = exprs(&args);
                    let (fc, gc) = (&self.api.callables[*fi], &self.api.callables[*gi]);
                    let setup = vec![format!(
                        "let value = ({}({list}), {}({list}));",
                        fc.path, gc.path
                    )];
                    let ty = Ty::Tuple(vec![f.ret.clone(), g.ret.clone()]);
                    let labels = vec![("value".to_string(), ty)];
                    let shown = format!(
                        "{}({list}) beside {}({list})",
                        short(&fc.path),
                        short(&gc.path)
                    );
                    let refs: Vec<&Value> = args.iter().collect();
                    out.push(self.candidate(Source::Callable(*fi), setup, labels, shown, &refs));
                }
            }
        }
        out
    }

    /// Values of the scope's crate types that have `Display`: built and observed, so their
    /// text is asserted (no function may return them).
    pub fn type_values(&mut self, scope: &std::collections::BTreeSet<&str>) -> Vec<Candidate> {
        let mut out = Vec::new();
        let names: Vec<String> = self.api.types.keys().cloned().collect();
        for (index, name) in names.iter().enumerate() {
            let decl = &self.api.types[name];
            if !scope.contains(decl.file.as_str()) || !decl.traits.contains("Display") {
                continue;
            }
            let args: Option<Vec<Ty>> = decl
                .generics
                .iter()
                .map(|(_, bounds)| satisfying(bounds, self.api))
                .collect();
            let Some(args) = args else { continue };
            let ty = Ty::Named(name.clone(), args);
            for v in self.inputs.values(&ty, 12) {
                let mut labels = Vec::new();
                self.observe("value", &ty, &mut labels);
                let setup = vec![format!("let value = {};", v.expr)];
                out.push(self.candidate(
                    Source::Value(index),
                    setup,
                    labels,
                    v.expr.clone(),
                    &[&v],
                ));
            }
        }
        out
    }

    /// Two values of each ordered crate type in scope compared (`(a < b, a == b, a > b)`):
    /// the `PartialOrd`, `Ord` and `PartialEq` impls are code of the crate too.
    pub fn comparisons(
        &mut self,
        scope: &std::collections::BTreeSet<&str>,
        rng: &mut Rng,
    ) -> Vec<Candidate> {
        let mut out = Vec::new();
        let names: Vec<String> = self.api.types.keys().cloned().collect();
        for (index, name) in names.iter().enumerate() {
            let decl = &self.api.types[name];
            if !scope.contains(decl.file.as_str()) || !decl.traits.contains("PartialOrd") {
                continue;
            }
            let args: Option<Vec<Ty>> = decl
                .generics
                .iter()
                .map(|(_, bounds)| satisfying(bounds, self.api))
                .collect();
            let Some(args) = args else { continue };
            let values = self.inputs.values(&Ty::Named(name.clone(), args), 12);
            if values.is_empty() {
                continue;
            }
            for _ in 0..8 {
                let (a, b) = (
                    &values[rng.below(values.len())],
                    &values[rng.below(values.len())],
                );
                let setup = vec![
                    format!("let (a, b) = ({}, {});", a.expr, b.expr),
                    "let value = (a < b, a == b, a > b);".to_string(),
                ];
                let labels = vec![("value".to_string(), Ty::Tuple(vec![Ty::Bool; 3]))];
                let shown = format!("{} against {}", a.expr, b.expr);
                out.push(self.candidate(Source::Compare(index), setup, labels, shown, &[a, b]));
            }
        }
        out
    }

    /// A doc example as rustdoc would run it (inside a function; `?` allowed).
    pub fn example(&mut self, index: usize, e: &Example) -> Candidate {
        let code = &e.code;
        let mut setup: Vec<String> = Vec::new();
        if code.contains("fn main") {
            setup.extend(code.lines().map(String::from));
            setup.push("main();".into());
        } else if code.contains('?') {
            let ends_ok = code.trim_end().ends_with("(())");
            setup.push("(|| -> Result<(), Box<dyn std::error::Error>> {".into());
            setup.extend(code.lines().map(String::from));
            if !ends_ok {
                setup.push("    Ok(())".into());
            }
            setup.push("})().unwrap();".into());
        } else {
            setup.extend(code.lines().map(String::from));
        }
        Candidate {
            id: self.id(),
            source: Source::Example(index),
            setup,
            observe: Vec::new(),
            labels: Vec::new(),
            call: format!("the doc example of `{}`", e.item),
            size: code.len(),
        }
    }
}

impl Maker<'_> {
    /// One value of each type, picked at random among its first `limit` (None when a type has
    /// none).
    fn random_args(&self, params: &[Ty], limit: usize, rng: &mut Rng) -> Option<Vec<Value>> {
        params
            .iter()
            .map(|t| {
                let vs = self.inputs.values(t, limit);
                (!vs.is_empty()).then(|| vs[rng.below(vs.len())].clone())
            })
            .collect()
    }
}

/// Values as an argument list: `1, "a"`.
fn exprs(values: &[Value]) -> String {
    values
        .iter()
        .map(|v| v.expr.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The types whose values have a literal or a plain comparison.
pub fn simple(t: &Ty) -> bool {
    match t {
        Ty::Bool | Ty::Char | Ty::Int(_) | Ty::Float(_) | Ty::String => true,
        Ty::Ref(t, false) => matches!(**t, Ty::Str) || simple(t),
        Ty::Option(t) | Ty::Vec(t) => simple(t),
        Ty::Tuple(ts) => ts.iter().all(simple),
        _ => false,
    }
}

fn observe_line(label: &str) -> String {
    match label {
        "value" | "receiver" => format!("tt_obs!({label:?}, &{label});"),
        "ok" => "if let Ok(ok) = &value { tt_obs!(\"ok\", ok); }".into(),
        "error" => "if let Err(error) = &value { tt_obs!(\"error\", error); }".into(),
        "some" => "if let Some(some) = &value { tt_obs!(\"some\", some); }".into(),
        l => {
            // A field is borrowed (taking it would move it out of the value); a getter called.
            let expr = if l.ends_with(')') {
                l.to_string()
            } else {
                format!("&{l}")
            };
            let get = format!("tt_get!({l:?}, {expr});");
            match l.split('.').next() {
                Some("ok") => format!("if let Ok(ok) = &value {{ {get} }}"),
                Some("some") => format!("if let Some(some) = &value {{ {get} }}"),
                _ => get,
            }
        }
    }
}

/// `my_crate::parser::parse` -> `parse`; `<my_crate::P as std::ops::Add>::add` -> `P::add`.
pub fn short(path: &str) -> String {
    if let Some(rest) = path.strip_prefix('<') {
        let ty = rest.split(" as ").next().unwrap_or(rest);
        let method = path.rsplit("::").next().unwrap_or(path);
        return format!("{}::{method}", ty.rsplit("::").next().unwrap_or(ty));
    }
    let parts: Vec<&str> = path.split("::").collect();
    match parts.len() {
        0 | 1 => path.to_string(),
        n if parts[n - 2].starts_with(char::is_uppercase) => parts[n - 2..].join("::"),
        n => parts[n - 1].to_string(),
    }
}
