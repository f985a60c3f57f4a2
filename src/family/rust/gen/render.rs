//! Kept candidates as the tests a person reads: the candidate's calls, then assertions built
//! from what its runs showed (a literal where the type has one and `==`; else the fields, the
//! getters, `to_string()`, `is_ok()`/`is_err()`); a panic as `#[should_panic(expected = …)]`;
//! a code defect as an ignored test with its evidence. One file per module of the crate.

use super::literal::{literal, parse, DebugValue};
use super::model::Api;
use super::probe::{Candidate, Observation, Seen};
use super::ty::Ty;

/// What a kept candidate became.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// It returned: its observations are asserted.
    Returns,
    /// It panicked as the code means to (a message of its own, or a documented panic).
    Panics(String),
    /// A code defect: the reason (`code_defect: …`) and the evidence for the comment.
    Defect { reason: String, evidence: String },
}

/// One test of a generated file.
#[derive(Debug, Clone, PartialEq)]
pub struct Test {
    pub name: String,
    pub docs: Vec<String>,
    pub attrs: Vec<String>,
    pub body: Vec<String>,
    /// The body goes in as written (a doc example: indenting it would change a string
    /// literal that spans lines).
    pub verbatim: bool,
    /// The candidate it was made from (its id in the probe).
    pub candidate: String,
}

/// The file a module's tests go to (`module` as the deliverer names it: `lib` for the crate's
/// root): `team_testing_parser_lexer.rs`, `team_testing_lib.rs`; L2's files end in
/// `_integration`, so both layers' files sit side by side in `tests/`.
pub fn file_name(module: &str, layer: &str) -> String {
    let stem = module.replace("::", "_");
    match layer.split('-').next() {
        Some("L1") | None => format!("team_testing_{stem}.rs"),
        Some(_) => format!("team_testing_{stem}_integration.rs"),
    }
}

/// The test a candidate becomes (None when nothing about it can be asserted).
pub fn test(c: &Candidate, seen: &Observation, verdict: &Verdict, api: &Api) -> Option<Test> {
    let mut attrs = vec!["#[test]".to_string()];
    let mut docs = vec![format!("`{}`", one_line(&c.call))];
    let mut checks = Vec::new();
    match verdict {
        Verdict::Returns => {
            checks = assertions(c, seen, api);
            if checks.is_empty() {
                return None;
            }
            docs[0].push_str(" returns what these assertions state.");
        }
        Verdict::Panics(message) => {
            docs[0].push_str(" panics.");
            let expected = cut(message.lines().next().unwrap_or_default(), 160);
            if expected.trim().is_empty() {
                attrs.push("#[should_panic]".into());
            } else {
                attrs.push(format!("#[should_panic(expected = {expected:?})]"));
            }
        }
        Verdict::Defect { reason, evidence } => {
            docs[0].push_str(" shows a code defect:");
            docs.extend(evidence.lines().map(|l| l.to_string()));
            docs.push("Run it with `cargo test -- --ignored`.".into());
            attrs.push(format!("#[ignore = {:?}]", cut(reason, 300)));
        }
    }
    // A result no assertion reads is not bound to a name.
    let reads_value = checks.iter().any(|l| mentions(l, "value"));
    let example = matches!(c.source, super::probe::Source::Example(_));
    let last = c.setup.len().saturating_sub(1);
    let mut body: Vec<String> = c
        .setup
        .iter()
        .enumerate()
        .map(|(i, s)| match s.strip_prefix("let value = ") {
            Some(call) if !reads_value && !example && i == last => format!("let _ = {call}"),
            _ => s.clone(),
        })
        .collect();
    body.extend(checks);
    Some(Test {
        name: String::new(),
        docs,
        attrs,
        body,
        // A `}` at the start of a line would end the test where the file's readers look
        // (`edit`): such an example is indented like any other body.
        verbatim: example && !c.setup.iter().any(|l| l.starts_with('}')),
        candidate: c.id.clone(),
    })
}

/// The whole file of `module`'s tests.
pub fn file(api: &Api, module: &str, layer: &str, seed: u64, tests: &[Test]) -> String {
    let name = if module.is_empty() || module == "lib" {
        api.crate_name.clone()
    } else {
        format!("{}::{module}", api.crate_name)
    };
    let mut out = format!(
        "//! Tests of `{name}`, written by team-testing's built-in generator ({layer}, seed {seed}).\n\
         //! Each test calls the public API with inputs the generator chose and asserts what it\n\
         //! returned; an ignored test shows a code defect (`cargo test -- --ignored`).\n"
    );
    for t in tests {
        out.push('\n');
        for d in &t.docs {
            out.push_str(format!("/// {d}").trim_end());
            out.push('\n');
        }
        for a in &t.attrs {
            out.push_str(a);
            out.push('\n');
        }
        out.push_str(&format!("fn {}() {{\n", t.name));
        for b in &t.body {
            for line in b.lines() {
                match t.verbatim {
                    true => out.push_str(line),
                    false => out.push_str(format!("    {line}").trim_end()),
                }
                out.push('\n');
            }
        }
        out.push_str("}\n");
    }
    out
}

/// The assertions of a returning candidate, in the order of its observations.
fn assertions(c: &Candidate, seen: &Observation, api: &Api) -> Vec<String> {
    let ty_of = |label: &str| c.labels.iter().find(|(l, _)| l == label).map(|(_, t)| t);
    let mut out = Vec::new();
    for root in ["value", "receiver"] {
        let Some(ty) = ty_of(root) else { continue };
        let Some(s) = seen.values.get(root) else {
            continue;
        };
        if let Some(line) = assert_value(root, ty, s, api) {
            let text = display_line(root, ty, s).filter(|t| *t != line);
            out.push(line);
            out.extend(text);
            // The error's text is the crate's code too (taken last: it moves the value).
            if let (Ty::Result(..), Some(error)) = (ty, seen.values.get("error")) {
                if let Some(text) = error.display.as_deref() {
                    out.push(format!(
                        "assert_eq!({root}.unwrap_err().to_string(), {text:?});"
                    ));
                }
            }
            continue;
        }
        match ty {
            Ty::Result(t, e) => out.extend(result_lines(c, seen, api, t, e)),
            Ty::Option(t) => out.extend(branch_lines(
                c,
                seen,
                api,
                "some",
                "Some",
                t,
                "value.is_none()",
            )),
            _ => out.extend(member_lines(c, seen, api, root)),
        }
    }
    out
}

fn result_lines(c: &Candidate, seen: &Observation, api: &Api, t: &Ty, e: &Ty) -> Vec<String> {
    if seen.values.contains_key("ok") {
        let inner = branch_lines(c, seen, api, "ok", "Ok", t, "value.is_ok()");
        return inner;
    }
    if let Some(s) = seen.values.get("error") {
        if let Some(line) = assert_value("error", e, s, api) {
            return vec![
                "let Err(error) = value else {".into(),
                "    panic!(\"expected an error\");".into(),
                "};".into(),
                line,
            ];
        }
        return vec!["assert!(value.is_err());".into()];
    }
    Vec::new()
}

/// Assertions inside `Ok(…)`/`Some(…)` (the variable `label`), or `fallback` alone.
fn branch_lines(
    c: &Candidate,
    seen: &Observation,
    api: &Api,
    label: &str,
    variant: &str,
    ty: &Ty,
    fallback: &str,
) -> Vec<String> {
    let Some(s) = seen.values.get(label) else {
        return match seen.values.get("value").and_then(|v| v.debug.as_deref()) {
            Some("None") if variant == "Some" => vec![format!("assert!({fallback});")],
            _ => Vec::new(),
        };
    };
    let mut inner: Vec<String> = assert_value(label, ty, s, api).into_iter().collect();
    if inner.is_empty() {
        inner = member_lines(c, seen, api, label);
    }
    if inner.is_empty() {
        return vec![format!(
            "assert!({});",
            fallback.replace("is_none", "is_some")
        )];
    }
    let what = if variant == "Ok" { "Ok" } else { "Some" };
    let mut out = vec![
        format!("let {what}({label}) = value else {{"),
        format!("    panic!(\"expected {what}\");"),
        "};".into(),
    ];
    out.extend(inner);
    out
}

/// Fields and getters of `root` (`value.len()`, `value.x`).
fn member_lines(c: &Candidate, seen: &Observation, api: &Api, root: &str) -> Vec<String> {
    let prefix = format!("{root}.");
    let mut out = Vec::new();
    for (label, ty) in c.labels.iter().filter(|(l, _)| l.starts_with(&prefix)) {
        if let Some(line) = seen
            .values
            .get(label)
            .and_then(|s| assert_value(label, ty, s, api))
        {
            out.push(line);
        }
    }
    if out.is_empty() {
        // A type with Display and nothing else to compare says what it is in its text.
        if let Some(text) = seen.values.get(root).and_then(|s| s.display.as_deref()) {
            out.push(format!("assert_eq!({root}.to_string(), {text:?});"));
        }
    }
    out
}

/// One assertion on `expr` of type `ty`, from what was seen of it.
fn assert_value(expr: &str, ty: &Ty, s: &Seen, api: &Api) -> Option<String> {
    let debug = s.debug.as_deref()?;
    let value = parse(debug)?;
    match (&value, ty) {
        (DebugValue::Float(f), Ty::Float(_)) if f == "NaN" => {
            return Some(format!("assert!({expr}.is_nan());"))
        }
        (DebugValue::Bool(b), Ty::Bool) if s.eq == Some(true) => {
            let not = if *b { "" } else { "!" };
            return Some(format!("assert!({not}{expr});"));
        }
        (DebugValue::Seq(items), Ty::Vec(_) | Ty::Ref(..)) if items.is_empty() => {
            return Some(format!("assert!({expr}.is_empty());"))
        }
        (DebugValue::Map(items), Ty::Map(..)) if items.is_empty() => {
            return Some(format!("assert!({expr}.is_empty());"))
        }
        _ => {}
    }
    if s.eq == Some(true) {
        if let Some(lit) = literal(ty, &value, api, true) {
            return Some(format!("assert_eq!({expr}, {lit});"));
        }
    }
    // A crate type without a literal (private fields, no `==`) says what it is in its text.
    match (&s.display, ty) {
        (Some(text), Ty::Named(..)) => Some(format!("assert_eq!({expr}.to_string(), {text:?});")),
        _ => None,
    }
}

/// The text of a crate type that also has a literal: its `Display` is code of the crate too.
fn display_line(expr: &str, ty: &Ty, s: &Seen) -> Option<String> {
    match (&s.display, ty) {
        (Some(text), Ty::Named(..)) => Some(format!("assert_eq!({expr}.to_string(), {text:?});")),
        _ => None,
    }
}

/// Whether `line` uses the variable `name` (not only a longer name that starts with it).
fn mentions(line: &str, name: &str) -> bool {
    line.match_indices(name).any(|(i, _)| {
        let before = line[..i].chars().next_back();
        let after = line[i + name.len()..].chars().next();
        let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
        !word(before) && !word(after)
    })
}

fn one_line(text: &str) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.len() <= 160 {
        return flat;
    }
    format!("{}…", cut(&flat, 160))
}

/// `text` cut to at most `max` bytes on a character boundary.
pub fn cut(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_string()
}

#[cfg(test)]
mod tests {
    use super::super::probe::Source;
    use super::*;

    fn seen(debug: &str, eq: Option<bool>, display: Option<&str>) -> Seen {
        Seen {
            debug: Some(debug.into()),
            eq,
            display: display.map(String::from),
        }
    }

    fn candidate(setup: &str, labels: Vec<(&str, Ty)>) -> Candidate {
        Candidate {
            id: "c_00001".into(),
            source: Source::Callable(0),
            setup: vec![setup.into()],
            observe: Vec::new(),
            labels: labels.into_iter().map(|(l, t)| (l.into(), t)).collect(),
            call: "f(1)".into(),
            size: 1,
        }
    }

    #[test]
    fn plain_values_get_the_plain_assertion_and_a_type_without_eq_none() {
        let api = Api::default();
        let at = |ty: Ty, s: Seen| assert_value("value", &ty, &s, &api);
        assert_eq!(
            at(Ty::Bool, seen("false", Some(true), Some("false"))).as_deref(),
            Some("assert!(!value);")
        );
        assert_eq!(
            at(Ty::Float("f64"), seen("NaN", Some(false), None)).as_deref(),
            Some("assert!(value.is_nan());")
        );
        let ints = Ty::Vec(Box::new(Ty::Int("i32")));
        assert_eq!(
            at(ints.clone(), seen("[]", Some(true), None)).as_deref(),
            Some("assert!(value.is_empty());")
        );
        assert_eq!(
            at(ints, seen("[1, 2]", Some(true), None)).as_deref(),
            Some("assert_eq!(value, vec![1, 2]);")
        );
        // Without `==` there is nothing to compare with.
        assert_eq!(at(Ty::Int("i64"), seen("3", None, None)), None);
    }

    #[test]
    fn an_error_is_asserted_by_its_text_a_panic_by_its_message_and_a_defect_is_ignored() {
        let api = Api::default();
        let error = Ty::Named("ParseError".into(), Vec::new());
        let ty = Ty::Result(Box::new(Ty::Int("i64")), Box::new(error.clone()));
        let c = candidate(
            "let value = my::parse(\"x\");",
            vec![("value", ty), ("ok", Ty::Int("i64")), ("error", error)],
        );
        let mut observed = Observation {
            returned: true,
            ..Observation::default()
        };
        observed.values.insert(
            "value".into(),
            seen("Err(ParseError { at: 0 })", None, None),
        );
        observed.values.insert(
            "error".into(),
            seen("ParseError { at: 0 }", None, Some("bad input at 0")),
        );
        let t = test(&c, &observed, &Verdict::Returns, &api).unwrap();
        assert_eq!(
            t.body,
            vec![
                "let value = my::parse(\"x\");",
                "let Err(error) = value else {",
                "    panic!(\"expected an error\");",
                "};",
                "assert_eq!(error.to_string(), \"bad input at 0\");",
            ]
        );

        let panics = test(
            &c,
            &observed,
            &Verdict::Panics("no digits\nmore".into()),
            &api,
        )
        .unwrap();
        assert!(panics
            .attrs
            .contains(&"#[should_panic(expected = \"no digits\")]".to_string()));
        assert_eq!(panics.body, vec!["let _ = my::parse(\"x\");"]);

        let defect = Verdict::Defect {
            reason: "code_defect: `f(1)` panics".into(),
            evidence: "`f(1)` panics at src/lib.rs:3".into(),
        };
        let d = test(&c, &observed, &defect, &api).unwrap();
        assert!(d
            .attrs
            .contains(&"#[ignore = \"code_defect: `f(1)` panics\"]".to_string()));
        assert!(d.docs.iter().any(|l| l.contains("src/lib.rs:3")));

        // Nothing observed, nothing to assert: no test.
        let silent = Observation {
            returned: true,
            ..Observation::default()
        };
        assert_eq!(test(&c, &silent, &Verdict::Returns, &api), None);
    }
}
