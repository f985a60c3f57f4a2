//! What a change altered, for Rust: the calls a search ran (its delivered tests' and those of
//! the functions the change touched) built again, as the probe builds candidates, into a test
//! target of a copy of the crate at another commit, and each run twice. What a call did
//! becomes the body of a test written exactly as the search writes one (`render::test`, with
//! the search's reading of the API), so the two versions' bodies compare as text. A call the
//! other version does not compile (its function is gone, its signature changed) is missing
//! there, not a failure of the replay.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::deliver::snake;
use super::model::Api;
use super::probe::{Candidate, Observation, Probe, Source};
use super::render::{self, cut, Test, Verdict};
use super::ty::Ty;
use super::{api, prepare_copy, work_dirs, RustGenError};
use crate::family::generator::ReplayJob;
use crate::gen::behaviour::{Call, ReplayResult, Replayed, ReplayedModule};

/// A report's line of what a call did, at most.
const SHOWN_MAX: usize = 200;

/// A candidate as the call list carries it: what the probe needs to build it again.
#[derive(Debug, Serialize, Deserialize)]
struct Native {
    /// `callable`, `example`, `value`, `sequence`, `compare`, with its index in the search's
    /// reading of the API.
    kind: String,
    index: usize,
    setup: Vec<String>,
    observe: Vec<String>,
    /// The observed values and their types as Rust source.
    labels: Vec<(String, String)>,
    size: usize,
}

/// The candidate `c` as a call of the list (`test`: the delivered test it became).
pub fn call(api: &Api, c: &Candidate, test: Option<String>) -> Call {
    let (kind, index) = match c.source {
        Source::Callable(i) => ("callable", i),
        Source::Example(i) => ("example", i),
        Source::Value(i) => ("value", i),
        Source::Sequence(i) => ("sequence", i),
        Source::Compare(i) => ("compare", i),
    };
    let native = Native {
        kind: kind.into(),
        index,
        setup: c.setup.clone(),
        observe: c.observe.clone(),
        labels: c
            .labels
            .iter()
            .filter_map(|(l, t)| Some((l.clone(), t.rust("Self")?)))
            .collect(),
        size: c.size,
    };
    // The input as a reviewer reads it: what comes before the call, then the call.
    let statements = match c.source {
        Source::Example(_) => Vec::new(),
        _ => c.setup[..c.setup.len().saturating_sub(1)].to_vec(),
    };
    Call {
        function: function_name(api, c.source),
        statements,
        expr: c.call.clone(),
        test,
        native: serde_json::to_value(native).ok(),
    }
}

/// The candidate a call of the list stands for, as probe candidate `id`.
fn candidate(call: &Call, id: String) -> Option<Candidate> {
    let n: Native = serde_json::from_value(call.native.clone()?).ok()?;
    let source = match n.kind.as_str() {
        "callable" => Source::Callable(n.index),
        "example" => Source::Example(n.index),
        "value" => Source::Value(n.index),
        "sequence" => Source::Sequence(n.index),
        "compare" => Source::Compare(n.index),
        _ => return None,
    };
    let labels = n
        .labels
        .into_iter()
        .filter_map(|(l, t)| Some((l, Ty::of(&syn::parse_str::<syn::Type>(&t).ok()?))))
        .collect();
    Some(Candidate {
        id,
        source,
        setup: n.setup,
        observe: n.observe,
        labels,
        call: call.expr.clone(),
        size: n.size,
    })
}

/// How a report names what a candidate exercises: `pricing::total_price`,
/// `shop::Basket::add` (the crate's root by the crate's name), `pricing::Price` for a value.
pub fn function_name(api: &Api, source: Source) -> String {
    let local = |path: &str| {
        path.strip_prefix(&format!("{}::", api.crate_name))
            .unwrap_or(path)
            .to_string()
    };
    match source {
        Source::Callable(i) => {
            let Some(c) = api.callables.get(i) else {
                return String::new();
            };
            let module = match c.module.as_str() {
                "" => api.crate_name.as_str(),
                m => m,
            };
            let mut parts = vec![module.to_string()];
            if let Some(Ty::Named(owner, _)) = &c.owner {
                parts.push(owner.clone());
            }
            parts.push(c.name.clone());
            parts.join("::")
        }
        Source::Example(i) => api
            .examples
            .get(i)
            .map(|e| local(&e.item))
            .unwrap_or_default(),
        Source::Value(i) | Source::Sequence(i) | Source::Compare(i) => api
            .types
            .values()
            .nth(i)
            .map(|d| local(&d.path))
            .unwrap_or_default(),
    }
}

/// The replay of `job`'s calls in its mirror.
pub fn replay(job: &ReplayJob) -> Result<ReplayResult, RustGenError> {
    let body = &job.req.replay;
    // The calls were made with the search's reading of the API (the project's tree).
    let searched = api::discover(job.repo)?;
    let here = api::discover(job.mirror).ok();
    let copy = std::path::absolute(job.mirror).unwrap_or_else(|_| job.mirror.into());
    let workspace = copy.parent().unwrap_or(&copy).to_path_buf();
    let (scratch, target_dir) = work_dirs(&workspace, &body.layer);
    let code = body.layer.split('-').next().unwrap_or(&body.layer);
    let target = format!("tt_replay_{code}");
    prepare_copy(&copy, &copy, &[&target])?;
    if job.base {
        set_apart(&copy)?;
    }
    let profiles = scratch
        .join("profiles")
        .join(format!("replay-{}", tag(&copy)));
    for dir in [&profiles, &target_dir, &copy.join("tests")] {
        std::fs::create_dir_all(dir).map_err(|cause| RustGenError::Copy {
            path: dir.to_path_buf(),
            cause,
        })?;
    }
    let id = |m: usize, k: usize| format!("r{m}_{k}");
    let candidates: Vec<Candidate> = body
        .modules
        .iter()
        .enumerate()
        .flat_map(|(m, module)| {
            module
                .calls
                .iter()
                .enumerate()
                .filter_map(move |(k, call)| candidate(call, id(m, k)))
        })
        .collect();
    let mut probe = Probe {
        copy: copy.clone(),
        target,
        target_dir,
        cargo: "cargo".into(),
        sandbox: job.sandbox,
        deadline: Instant::now() + job.timeout,
        binary: None,
    };
    let (built, dropped) = match probe.build(candidates) {
        Ok(built) => built,
        Err(e) => return Ok(unloadable(job, &e.to_string())),
    };
    let dropped: BTreeMap<String, String> =
        dropped.into_iter().map(|(c, why)| (c.id, why)).collect();
    let timeout = Duration::from_secs_f64(body.call_timeout_s.clamp(0.5, 60.0));
    let mut runs: BTreeMap<String, (Candidate, [Observation; 2])> = BTreeMap::new();
    for c in built {
        let profile = profiles.join(format!("{}.profraw", c.id));
        let first = probe.run(&c.id, &profile, timeout);
        let second = probe.run(&c.id, &profile, timeout);
        let _ = std::fs::remove_file(&profile);
        runs.insert(c.id.clone(), (c, [first, second]));
    }
    let _ = std::fs::remove_file(probe.file(&probe.target));
    let mut modules = Vec::new();
    for (m, module) in body.modules.iter().enumerate() {
        let mut tests: Vec<Test> = Vec::new();
        let replayed = module
            .calls
            .iter()
            .enumerate()
            .map(|(k, call)| {
                let name = format!("{}_r{}", snake(short(&call.function)), k + 1);
                let mut entry = Replayed {
                    function: call.function.clone(),
                    expr: call.expr.clone(),
                    test: call.test.clone(),
                    name: name.clone(),
                    ..Replayed::default()
                };
                if let Some(c) = here.as_ref().and_then(|a| callable(a, &call.function)) {
                    entry.doc = Some(c.doc.clone()).filter(|d| !d.is_empty());
                    entry.lines = Some([c.lines.0, c.lines.1]);
                }
                let key = id(m, k);
                if let Some(why) = dropped.get(&key) {
                    entry.missing = true;
                    entry.shown = cut(
                        &format!("does not build here: {}", why.lines().next().unwrap_or("")),
                        SHOWN_MAX,
                    );
                } else if let Some((c, seen)) = runs.get(&key) {
                    if let Some(mut test) = observed(&mut entry, c, seen, &searched) {
                        test.name = name;
                        tests.push(test);
                    }
                } else {
                    entry.shown = "cannot be replayed: the call's form is unknown".into();
                }
                entry
            })
            .collect();
        let source = match tests.is_empty() {
            true => String::new(),
            false => render::file(&searched, &module.module, &body.layer, body.seed, &tests),
        };
        modules.push(ReplayedModule {
            module: module.module.clone(),
            test_file: render::file_name(&module.module, &body.layer),
            source,
            replayed,
            import_error: None,
        });
    }
    Ok(ReplayResult { modules })
}

/// What a call's two runs showed, into `entry`; the test asserting it, when both runs agree
/// and something can be asserted.
fn observed(
    entry: &mut Replayed,
    c: &Candidate,
    [first, second]: &[Observation; 2],
    api: &Api,
) -> Option<Test> {
    let message = |o: &Observation| o.panic.as_ref().map(|(m, _)| m.clone());
    entry.stable = first.stopped.is_none()
        && first.effects.is_empty()
        && message(first) == message(second)
        && first.returned == second.returned
        && first.values == second.values;
    entry.raised = first.panic.is_some() || is_err(c, first);
    entry.shown = shown(first);
    if !entry.stable {
        return None;
    }
    let verdict = match &first.panic {
        None => Verdict::Returns,
        // What came before the call panicked: nothing of the call to assert.
        Some(_) if !first.calling => return None,
        Some((m, _)) => Verdict::Panics(m.clone()),
    };
    let test = render::test(c, first, &verdict, api)?;
    // The assertion as text: the attributes that state it (`should_panic`), then the body.
    entry.body = Some(
        test.attrs
            .iter()
            .filter(|a| *a != "#[test]")
            .chain(&test.body)
            .cloned()
            .collect(),
    );
    Some(test)
}

/// `returns Ok(4)`, `panics: index out of bounds: …`, `did not finish: …`.
fn shown(seen: &Observation) -> String {
    let text = if let Some((m, _)) = &seen.panic {
        format!("panics: {}", m.lines().next().unwrap_or_default())
    } else if let Some(why) = &seen.stopped {
        format!("did not finish: {}", why.lines().next().unwrap_or_default())
    } else {
        let value = ["value", "receiver"].iter().find_map(|l| {
            let s = seen.values.get(*l)?;
            s.debug.clone().or_else(|| s.display.clone())
        });
        match value {
            Some(v) => format!("returns {v}"),
            None => "returns".into(),
        }
    };
    cut(&text, SHOWN_MAX)
}

/// The call returned a `Result` that is an error.
fn is_err(c: &Candidate, seen: &Observation) -> bool {
    let result = c
        .labels
        .iter()
        .any(|(l, t)| l == "value" && matches!(t, Ty::Result(..)));
    result
        && seen
            .values
            .get("value")
            .and_then(|s| s.debug.as_deref())
            .is_some_and(|d| d.starts_with("Err("))
}

/// The callable a report names `function` in `api`.
fn callable<'a>(api: &'a Api, function: &str) -> Option<&'a super::model::Callable> {
    (0..api.callables.len())
        .find(|i| function_name(api, Source::Callable(*i)) == function)
        .map(|i| &api.callables[i])
}

/// `pricing::total_price` -> `total_price`.
fn short(function: &str) -> &str {
    function.rsplit("::").next().unwrap_or(function)
}

/// Gives the base's crate artifacts of their own in the target folder HEAD's builds share.
/// Cargo names a path crate's artifacts by its name, version and profile, not by its folder,
/// and a file git laid out carries its commit's time: without this, the base's build would
/// find HEAD's artifacts fresh (and a later HEAD build the base's). A profile setting of the
/// crate alone that changes nothing it does (one codegen unit fewer) sets it apart, and its
/// dependencies stay built.
fn set_apart(copy: &Path) -> Result<(), RustGenError> {
    let path = copy.join("Cargo.toml");
    let io = |cause| RustGenError::Copy {
        path: path.clone(),
        cause,
    };
    let text = std::fs::read_to_string(&path).map_err(io)?;
    let malformed = |why: String| io(std::io::Error::other(why));
    let mut manifest: toml::Table = text
        .parse()
        .map_err(|e: toml::de::Error| malformed(e.to_string()))?;
    let name = manifest
        .get("package")
        .and_then(|p| p.get("name"))
        .and_then(|n| n.as_str())
        .ok_or_else(|| malformed("no [package] name".into()))?
        .to_string();
    let table = |parent: &mut toml::Table, key: &str| -> Option<toml::Table> {
        match parent.remove(key) {
            Some(toml::Value::Table(t)) => Some(t),
            None => Some(toml::Table::new()),
            Some(_) => None,
        }
    };
    let mut profile = table(&mut manifest, "profile")
        .ok_or_else(|| malformed("[profile] is not a table".into()))?;
    let mut dev = table(&mut profile, "dev")
        .ok_or_else(|| malformed("[profile.dev] is not a table".into()))?;
    let mut packages = table(&mut dev, "package")
        .ok_or_else(|| malformed("[profile.dev.package] is not a table".into()))?;
    let mut own = table(&mut packages, &name)
        .ok_or_else(|| malformed("the crate's profile is not a table".into()))?;
    let units = own
        .get("codegen-units")
        .and_then(|v| v.as_integer())
        .unwrap_or(256);
    own.insert(
        "codegen-units".into(),
        toml::Value::Integer(if units > 1 { units - 1 } else { 2 }),
    );
    packages.insert(name, toml::Value::Table(own));
    dev.insert("package".into(), toml::Value::Table(packages));
    profile.insert("dev".into(), toml::Value::Table(dev));
    manifest.insert("profile".into(), toml::Value::Table(profile));
    let text = toml::to_string(&manifest).map_err(|e| malformed(e.to_string()))?;
    crate::util::write_nofollow(&path, text.as_bytes()).map_err(io)
}

/// The mirror's folder name: each version's raw profiles apart.
fn tag(copy: &Path) -> String {
    copy.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Every module unloadable, with why (the crate does not build in this version).
fn unloadable(job: &ReplayJob, why: &str) -> ReplayResult {
    let modules = job
        .req
        .replay
        .modules
        .iter()
        .map(|m| ReplayedModule {
            module: m.module.clone(),
            test_file: render::file_name(&m.module, &job.req.replay.layer),
            source: String::new(),
            replayed: m
                .calls
                .iter()
                .map(|c| Replayed {
                    function: c.function.clone(),
                    expr: c.expr.clone(),
                    test: c.test.clone(),
                    missing: true,
                    shown: cut(why, SHOWN_MAX),
                    ..Replayed::default()
                })
                .collect(),
            import_error: Some(cut(why, 400)),
        })
        .collect();
    ReplayResult { modules }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn api() -> Api {
        let mut api = Api {
            crate_name: "shop".into(),
            ..Api::default()
        };
        api.callables.push(super::super::model::Callable {
            file: "src/pricing.rs".into(),
            module: "pricing".into(),
            name: "total_price".into(),
            owner: None,
            path: "shop::pricing::total_price".into(),
            receiver: super::super::model::Receiver::None,
            params: vec![("qty".into(), Ty::Int("u32"))],
            ret: Ty::Int("u32"),
            generics: Vec::new(),
            lines: (3, 5),
            documents_panics: false,
            doc: String::new(),
            via_trait: None,
        });
        api
    }

    #[test]
    fn the_base_crate_gets_a_profile_of_its_own_and_keeps_the_rest_of_its_manifest() {
        let dir = tempfile::tempdir().unwrap();
        let manifest = "[package]\nname = \"shop\"\nversion = \"0.1.0\"\n\n\
                        [profile.dev.package.shop]\nopt-level = 1\n";
        std::fs::write(dir.path().join("Cargo.toml"), manifest).unwrap();
        set_apart(dir.path()).unwrap();
        let text = std::fs::read_to_string(dir.path().join("Cargo.toml")).unwrap();
        let back: toml::Table = text.parse().unwrap();
        let own = &back["profile"]["dev"]["package"]["shop"];
        assert_eq!(own["codegen-units"].as_integer(), Some(255));
        assert_eq!(own["opt-level"].as_integer(), Some(1));
        assert_eq!(back["package"]["version"].as_str(), Some("0.1.0"));
    }

    #[test]
    fn a_candidate_goes_through_the_call_list_unchanged() {
        let api = api();
        let c = Candidate {
            id: "c_0007".into(),
            source: Source::Callable(0),
            setup: vec!["let q = 2;".into(), "let value = total_price(q);".into()],
            observe: vec!["tt_obs!(\"value\", &value);".into()],
            labels: vec![
                (
                    "value".into(),
                    Ty::Result(Box::new(Ty::Int("u32")), Box::new(Ty::String)),
                ),
                (
                    "map".into(),
                    Ty::Map("BTreeMap", Box::new(Ty::String), Box::new(Ty::Bool)),
                ),
            ],
            call: "total_price(q)".into(),
            size: 3,
        };
        let listed = call(&api, &c, Some("total_price_1".into()));
        assert_eq!(listed.function, "pricing::total_price");
        assert_eq!(listed.statements, vec!["let q = 2;".to_string()]);
        assert_eq!(listed.expr, "total_price(q)");
        let back = candidate(&listed, "r0_0".into()).unwrap();
        assert_eq!(back.id, "r0_0");
        assert_eq!(
            (
                back.source,
                &back.setup,
                &back.observe,
                &back.labels,
                back.size
            ),
            (c.source, &c.setup, &c.observe, &c.labels, c.size)
        );
    }
}
