//! The search: generations of candidates built into the probe, run one by one, and kept when
//! they reach coverage counters no kept candidate reached, when they show a code defect (the
//! shortest input per function and kind of panic), or when they panic as the code means to.
//! What is kept runs a second time: values that differ between runs are never asserted.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::candidates::{concrete, Maker};
use super::coverage::{Counter, Counts, LlvmTools};
use super::focus::Focus;
use super::inputs::{Inputs, Rng};
use super::model::Api;
use super::probe::{Candidate, Observation, Probe, ProbeError, Source};
use super::render::{cut, Verdict};
use crate::gen::{Finding, GenRequest};

/// Candidates per callable in the first generation and in the next, which aims at the
/// functions with counters still unreached.
const FIRST_PER_CALLABLE: usize = 16;
const NEXT_PER_CALLABLE: usize = 16;
const GENERATIONS: usize = 3;
/// L2 sequences per type with `&mut self` methods, per generation.
const SEQUENCES_PER_TYPE: usize = 10;
/// L2 chains (`f(g(x))`) per generation.
const CHAINS: usize = 60;
/// Without coverage, the distinct results kept per callable.
const UNGUIDED_PER_CALLABLE: usize = 3;

pub struct Search<'a> {
    pub api: &'a Api,
    pub req: &'a GenRequest,
    pub scratch: PathBuf,
    pub probe: Probe<'a>,
    pub tools: Option<LlvmTools>,
    pub call_timeout: Duration,
}

/// A kept candidate, what it showed and what it becomes.
pub struct Kept {
    pub candidate: Candidate,
    pub seen: Observation,
    pub verdict: Verdict,
}

/// What the search found.
pub struct Found {
    pub kept: Vec<Kept>,
    /// Calls of the callables the change touched (and their callers) that ran, kept or not.
    pub focus: Vec<Candidate>,
    pub findings: Vec<Finding>,
    pub stats: serde_json::Map<String, serde_json::Value>,
}

impl Search<'_> {
    pub fn run(&mut self) -> Result<Found, ProbeError> {
        let api = self.api;
        let l2 = self.req.layer.starts_with("L2");
        let scope: BTreeSet<&str> = self.req.modules.iter().map(|m| m.file.as_str()).collect();
        let callables: Vec<usize> = (0..api.callables.len())
            .filter(|i| scope.contains(api.callables[*i].file.as_str()))
            .collect();
        // A revision round aims at the lines the last run missed: the functions that hold them
        // get twice the candidates, the others half.
        let aimed: BTreeSet<usize> = callables
            .iter()
            .copied()
            .filter(|i| {
                let c = &api.callables[*i];
                self.req
                    .missing
                    .get(&c.file)
                    .is_some_and(|lines| lines.iter().any(|l| (c.lines.0..=c.lines.1).contains(l)))
            })
            .collect();
        let mut stats = Stats::default();
        let mut effects: Vec<Finding> = Vec::new();
        let mut side_effects: BTreeSet<usize> = BTreeSet::new();
        let started = Instant::now();
        // What cannot be called with simple types is left out, with why; so is a function
        // whose own code reaches the file system, the network or other processes (what it
        // does there would happen for real under the user's `cargo test`).
        for i in &callables {
            if let Err(why) = concrete(&api.callables[*i], api) {
                stats
                    .left_out
                    .push(format!("{}: {why}", api.callables[*i].path));
            }
        }
        let callables: Vec<usize> = callables
            .into_iter()
            .filter(|i| match effectful(&self.probe.copy, &api.callables[*i]) {
                Some(call) => {
                    stats.left_out.push(format!(
                        "{}: its code calls `{call}`, which acts outside the test",
                        api.callables[*i].path
                    ));
                    false
                }
                None => true,
            })
            .collect();
        // A change-scoped search aims at what the change touched first.
        let mut focus = Focus::new(api, &callables, &self.req.changed, &self.probe.copy);
        let touched: BTreeSet<usize> = callables
            .iter()
            .copied()
            .filter(|i| focus.contains(*i))
            .collect();
        let share = |i: &usize| {
            let n = match (self.req.missing.is_empty(), aimed.contains(i)) {
                (true, _) => FIRST_PER_CALLABLE,
                (false, true) => FIRST_PER_CALLABLE * 2,
                (false, false) => FIRST_PER_CALLABLE / 2,
            };
            match touched.contains(i) {
                true => n.max(FIRST_PER_CALLABLE) * 2,
                false => n,
            }
        };
        let examples: Vec<usize> = (0..api.examples.len())
            .filter(|i| scope.contains(api.examples[*i].file.as_str()))
            .collect();
        let example_strings: Vec<String> = examples
            .iter()
            .flat_map(|i| string_literals(&api.examples[*i].code))
            .collect();
        let separators = separators(&self.probe.copy, &scope);
        let inputs = Inputs::new(api, &example_strings, &separators, self.req.seed);
        let mut maker = Maker::new(api, &inputs, 0);
        let mut rng = Rng(self.req.seed);
        let mut covered: BTreeSet<Counter> = BTreeSet::new();
        let mut features: BTreeSet<(String, u32, bool)> = BTreeSet::new();
        let mut universe: BTreeSet<Counter> = BTreeSet::new();
        let mut kept: Vec<Kept> = Vec::new();
        let mut defects: BTreeMap<(Source, &'static str), usize> = BTreeMap::new();
        for generation in 0..GENERATIONS {
            // The first generation always runs; a later one only within the first three
            // quarters of the budget (the role's backstop is the budget and a minute more, in
            // which what is kept is run again and checked).
            if generation > 0 && started.elapsed().as_secs_f64() > self.req.budget_s * 0.75 {
                stats.stopped_by_budget = true;
                break;
            }
            let candidates: Vec<Candidate> = if l2 {
                let mut all = maker.sequences(&scope, SEQUENCES_PER_TYPE, &mut rng);
                all.extend(maker.chains(&scope, CHAINS, &mut rng));
                all.extend(maker.pairs(&scope, CHAINS, &mut rng));
                all
            } else if generation == 0 {
                let mut all: Vec<Candidate> = callables
                    .iter()
                    .flat_map(|i| maker.calls(*i, share(i), false, &mut rng))
                    .collect();
                all.extend(
                    examples
                        .iter()
                        .map(|i| maker.example(*i, &api.examples[*i])),
                );
                all.extend(maker.type_values(&scope));
                all.extend(maker.comparisons(&scope, &mut rng));
                all
            } else {
                // Random picks for every callable: the counters still unreached are mostly in
                // private helpers, which no callable's name tells apart; a callable whose own
                // function is finished gets fewer.
                let open = unfinished(&universe, &covered);
                callables
                    .iter()
                    .flat_map(|i| {
                        let own = open.iter().any(|f| names(f, &api.callables[*i].name));
                        let n = if own || touched.contains(i) {
                            NEXT_PER_CALLABLE
                        } else {
                            NEXT_PER_CALLABLE / 2
                        };
                        maker.calls(*i, n, true, &mut rng)
                    })
                    .collect()
            };
            if candidates.is_empty() {
                break;
            }
            stats.candidates += candidates.len();
            let kept_before = kept.len();
            let (built, dropped) = match self.probe.build(candidates) {
                Ok(built) => built,
                // A later generation that does not build ends the search with what it has.
                Err(ProbeError::Unattributed(why)) if generation > 0 => {
                    stats.compile_errors.push(why);
                    break;
                }
                Err(e) => return Err(e),
            };
            stats.not_compiled += dropped.len();
            stats.compile_errors.extend(
                dropped
                    .iter()
                    .take(3)
                    .map(|(c, why)| format!("{}: {}", c.call, first_line(why))),
            );
            let runs = self.run_all(&built, &format!("g{generation}"));
            for (c, (seen, counts)) in built.into_iter().zip(runs) {
                if let Some(counts) = &counts {
                    universe.extend(counts.all.iter().cloned());
                }
                let feats = counts.as_ref().map(Counts::features).unwrap_or_default();
                let ran = counts.map(|c| c.ran).unwrap_or_default();
                let new = feats.iter().any(|f| !features.contains(f));
                let judged = self.judge(&c, &seen);
                if matches!(judged, Judged::Verdict(_) | Judged::Defect(..)) {
                    focus.offer(&c);
                }
                let verdict = match judged {
                    Judged::Stopped => {
                        stats.stopped += 1;
                        if stats.stop_reasons.len() < 3 {
                            let why = seen.stopped.clone().unwrap_or_default();
                            stats
                                .stop_reasons
                                .push(format!("{}: {}", c.call, first_line(&why)));
                        }
                        continue;
                    }
                    Judged::Setup => {
                        stats.setup_panics += 1;
                        continue;
                    }
                    Judged::Denied(why) => {
                        stats.denied += 1;
                        if stats.denied_examples.len() < 3 {
                            stats.denied_examples.push(format!("{}: {why}", c.call));
                        }
                        continue;
                    }
                    Judged::SideEffect(what) => {
                        if let Source::Callable(i) = c.source {
                            let callable = &api.callables[i];
                            if side_effects.insert(i) {
                                effects.push(Finding {
                                    module: callable.module.clone(),
                                    function: callable.path.clone(),
                                    kind: "side_effect".into(),
                                    call: c.call.clone(),
                                    expected: Some(
                                        "no effect outside a temporary folder of its own".into(),
                                    ),
                                    actual: Some(what),
                                    test: None,
                                });
                            }
                        }
                        continue;
                    }
                    Judged::Defect(class, reason, evidence) => {
                        // The shortest input per function and kind of defect.
                        match defects.get(&(c.source, class)) {
                            Some(&at) if kept[at].candidate.size <= c.size => continue,
                            Some(&at) => {
                                kept[at] = Kept {
                                    candidate: c,
                                    seen,
                                    verdict: Verdict::Defect { reason, evidence },
                                };
                                continue;
                            }
                            None => {
                                defects.insert((c.source, class), kept.len());
                                Verdict::Defect { reason, evidence }
                            }
                        }
                    }
                    Judged::Verdict(v) => {
                        let guided = self.tools.is_some();
                        let room = kept
                            .iter()
                            .filter(|k| k.candidate.source == c.source)
                            .count()
                            < UNGUIDED_PER_CALLABLE;
                        if (guided && !new) || (!guided && !room) {
                            continue;
                        }
                        v
                    }
                };
                covered.extend(ran);
                features.extend(feats);
                kept.push(Kept {
                    candidate: c,
                    seen,
                    verdict,
                });
            }
            let gained = kept.len() > kept_before;
            if !gained || (!l2 && !universe.is_empty() && covered.len() >= universe.len()) {
                break;
            }
        }
        self.steady(&mut kept, &mut stats)?;
        let mut findings: Vec<Finding> = kept.iter().filter_map(|k| finding(api, k)).collect();
        findings.extend(effects);
        let mut map = serde_json::Map::new();
        map.insert("candidates".into(), stats.candidates.into());
        map.insert("not_compiled".into(), stats.not_compiled.into());
        map.insert("compile_errors".into(), stats.compile_errors.into());
        map.insert("stopped".into(), stats.stopped.into());
        map.insert("sandbox_denied".into(), stats.denied.into());
        map.insert(
            "sandbox_denied_examples".into(),
            stats.denied_examples.into(),
        );
        map.insert("left_out_here".into(), stats.left_out.into());
        map.insert("stop_reasons".into(), stats.stop_reasons.into());
        map.insert("setup_panics".into(), stats.setup_panics.into());
        map.insert("unsteady".into(), stats.unsteady.into());
        map.insert("stopped_by_budget".into(), stats.stopped_by_budget.into());
        map.insert("kept".into(), kept.len().into());
        map.insert(
            "counters".into(),
            serde_json::json!({"reached": covered.len(), "seen": universe.len()}),
        );
        Ok(Found {
            kept,
            focus: focus.calls,
            findings,
            stats: map,
        })
    }

    /// Runs every built candidate, each with its own raw profile, then reads the profiles.
    /// The runs are one at a time: the sandbox ends every process in it when a run ends.
    fn run_all(&self, built: &[Candidate], tag: &str) -> Vec<(Observation, Option<Counts>)> {
        let profiles = self.scratch.join("profiles").join(tag);
        let _ = std::fs::remove_dir_all(&profiles);
        let _ = std::fs::create_dir_all(&profiles);
        let profile_of = |c: &Candidate| profiles.join(format!("{}.profraw", c.id));
        let seen: Vec<Observation> = built
            .iter()
            .map(|c| self.probe.run(&c.id, &profile_of(c), self.call_timeout))
            .collect();
        // Reading a profile is llvm-profdata's work, outside the sandbox: two at a time.
        let next = AtomicUsize::new(0);
        let counts: Mutex<Vec<Option<Counts>>> = Mutex::new(vec![None; built.len()]);
        if let Some(tools) = &self.tools {
            std::thread::scope(|s| {
                for _ in 0..2 {
                    s.spawn(|| loop {
                        let i = next.fetch_add(1, Ordering::SeqCst);
                        let Some(c) = built.get(i) else { break };
                        let profile = profile_of(c);
                        let read = tools.counters(&profile, &self.api.crate_name);
                        let _ = std::fs::remove_file(&profile);
                        if let Ok(mut all) = counts.lock() {
                            all[i] = read;
                        }
                    });
                }
            });
        }
        seen.into_iter()
            .zip(counts.into_inner().unwrap_or_default())
            .collect()
    }

    /// Runs what was kept once more: a value seen differently is not asserted, a panic seen
    /// differently (or not at all) drops the candidate.
    fn steady(&mut self, kept: &mut Vec<Kept>, stats: &mut Stats) -> Result<(), ProbeError> {
        if kept.is_empty() {
            return Ok(());
        }
        // The probe holds the last generation's candidates: it is built with the kept ones.
        let candidates: Vec<Candidate> = kept.iter().map(|k| k.candidate.clone()).collect();
        let (built, _) = self.probe.build(candidates)?;
        let built_ids = super::probe::ids(&built);
        kept.retain(|k| built_ids.contains(&k.candidate.id));
        // Three more runs: an order that differs from run to run (a hash map's) can agree
        // twice by chance, seldom four times.
        let workspace = self
            .scratch
            .parent()
            .unwrap_or(&self.scratch)
            .display()
            .to_string();
        let mut keep = std::mem::take(kept);
        for round in 0..3 {
            let candidates: Vec<Candidate> = keep.iter().map(|k| k.candidate.clone()).collect();
            let again = self.run_all(&candidates, &format!("again{round}"));
            let mut next = Vec::new();
            for (mut k, (seen, _)) in keep.into_iter().zip(again) {
                // A panic in the probe's own lines moves with the file: its message must match.
                let message = |o: &Observation| o.panic.as_ref().map(|(m, _)| m.clone());
                let moved = message(&seen) != message(&k.seen) || seen.returned != k.seen.returned;
                // A message that names the session's folders would differ on the user's machine.
                let local = message(&k.seen).is_some_and(|m| m.contains(&workspace));
                if moved || local || !seen.effects.is_empty() {
                    stats.unsteady += 1;
                    continue;
                }
                k.seen.values.retain(|label, v| {
                    let names_here = [&v.debug, &v.display]
                        .iter()
                        .any(|t| t.as_deref().is_some_and(|t| t.contains(&workspace)));
                    seen.values.get(label) == Some(v) && !names_here
                });
                next.push(k);
            }
            keep = next;
        }
        *kept = keep;
        Ok(())
    }

    fn judge(&self, c: &Candidate, seen: &Observation) -> Judged {
        // A call that wrote a file, or that the sandbox stopped from writing or connecting,
        // would do it for real under the user's `cargo test`: never a test.
        if !seen.effects.is_empty() {
            return Judged::SideEffect(format!("wrote {}", seen.effects.join(", ")));
        }
        if let Some(denied) = denied(seen) {
            return Judged::Denied(denied);
        }
        if seen.stopped.is_some() && seen.panic.is_none() {
            return Judged::Stopped;
        }
        let Some((message, place)) = &seen.panic else {
            return Judged::Verdict(Verdict::Returns);
        };
        if !seen.calling {
            return Judged::Setup;
        }
        let (file, line) = split_place(place);
        match c.source {
            Source::Example(i) => {
                let e = &self.api.examples[i];
                let reason = format!(
                    "code_defect: the doc example of `{}` ({}:{}) no longer holds: {}",
                    e.item,
                    e.file,
                    e.line,
                    first_line(message)
                );
                let evidence = format!(
                    "The doc example of `{}` at {}:{} panics:\n{}",
                    e.item,
                    e.file,
                    e.line,
                    cut(message, 400)
                );
                Judged::Defect("doc example", reason, evidence)
            }
            Source::Value(_) | Source::Sequence(_) | Source::Compare(_) => {
                if file.starts_with("tests/") {
                    return Judged::Setup;
                }
                Judged::Verdict(Verdict::Panics(message.clone()))
            }
            Source::Callable(i) => {
                let callable = &self.api.callables[i];
                if file.starts_with("tests/") {
                    return Judged::Setup;
                }
                // Whose code panicked: the function itself (or a private helper of it), or
                // another public function (a constructor of its arguments, a callee).
                let owner = self
                    .api
                    .callables
                    .iter()
                    .position(|o| o.file == file && (o.lines.0..=o.lines.1).contains(&line));
                let own = owner.is_none_or(|o| o == i) && self.in_crate(file);
                // An operator impl that overflows or divides by zero does what the primitive
                // operator does; and an overflow panics only where overflow checks are on
                // (`cargo test --release` has none), so no test expects one.
                let operator = callable.via_trait.as_deref().is_some_and(is_operator);
                let overflow = message.starts_with("attempt to") && message.contains("overflow");
                match defect_class(message) {
                    Some("an arithmetic overflow" | "a division by zero") if operator => {
                        Judged::Setup
                    }
                    Some(class) if own && !callable.documents_panics => {
                        let reason = format!(
                            "code_defect: `{}` panics on well-typed input ({class}) at {place}: {}",
                            one_line(&c.call),
                            first_line(message)
                        );
                        let evidence = format!(
                            "`{}` panics at {place} with \"{}\"; its docs have no `# Panics` section.",
                            one_line(&c.call),
                            cut(first_line(message), 200)
                        );
                        Judged::Defect(class, reason, evidence)
                    }
                    _ if overflow => Judged::Setup,
                    _ => Judged::Verdict(Verdict::Panics(message.clone())),
                }
            }
        }
    }

    fn in_crate(&self, file: &str) -> bool {
        !file.starts_with('/') && self.api.modules.iter().any(|m| m.file == file)
    }
}

enum Judged {
    Stopped,
    Setup,
    /// It left files in its home or temporary folder.
    SideEffect(String),
    /// The sandbox refused it a write or a connection.
    Denied(String),
    Defect(&'static str, String, String),
    Verdict(Verdict),
}

#[derive(Default)]
struct Stats {
    candidates: usize,
    not_compiled: usize,
    compile_errors: Vec<String>,
    stopped: usize,
    stop_reasons: Vec<String>,
    denied: usize,
    denied_examples: Vec<String>,
    left_out: Vec<String>,
    setup_panics: usize,
    unsteady: usize,
    stopped_by_budget: bool,
}

/// The first call in the function's own lines that acts on the file system, the network,
/// processes or the environment (None when there is none, or the file cannot be read).
fn effectful(copy: &std::path::Path, c: &super::model::Callable) -> Option<&'static str> {
    const CALLS: [&str; 16] = [
        "fs::",
        "File::",
        "OpenOptions",
        "remove_file",
        "remove_dir",
        "create_dir",
        "net::",
        "TcpStream",
        "UdpSocket",
        "Command::new",
        "set_var",
        "remove_var",
        "set_current_dir",
        "process::exit",
        "libc::",
        "unsafe ",
    ];
    let text = std::fs::read_to_string(copy.join(&c.file)).ok()?;
    let (from, to) = (c.lines.0 as usize, c.lines.1 as usize);
    text.lines()
        .skip(from.saturating_sub(1))
        .take(to.saturating_sub(from) + 1)
        .map(|l| l.split("//").next().unwrap_or(l))
        .find_map(|l| CALLS.iter().find(|call| l.contains(*call)).copied())
}

/// The operator traits: their impls behave as the primitive operators do.
fn is_operator(name: &str) -> bool {
    matches!(
        name,
        "Add"
            | "Sub"
            | "Mul"
            | "Div"
            | "Rem"
            | "Neg"
            | "Not"
            | "BitAnd"
            | "BitOr"
            | "BitXor"
            | "Shl"
            | "Shr"
    )
}

/// What the sandbox refused the call (a write, a connection), as its error or panic says it.
fn denied(seen: &Observation) -> Option<String> {
    const SIGNS: [&str; 8] = [
        "Permission denied",
        "Read-only file system",
        "Operation not permitted",
        "Network is unreachable",
        "os error 13",
        "os error 30",
        "os error 1)",
        "os error 101",
    ];
    let texts = seen
        .values
        .values()
        .flat_map(|v| [v.debug.as_deref(), v.display.as_deref()])
        .flatten()
        .chain(seen.panic.as_ref().map(|(m, _)| m.as_str()));
    for text in texts {
        if let Some(sign) = SIGNS.iter().find(|s| text.contains(*s)) {
            return Some(format!("the sandbox refused it ({sign})"));
        }
    }
    None
}

/// The panics that are defects on well-typed input, when the docs do not announce them.
fn defect_class(message: &str) -> Option<&'static str> {
    let m = message.trim_start();
    if m.starts_with("index out of bounds")
        || m.starts_with("range end index")
        || m.starts_with("range start index")
        || m.starts_with("slice index starts at")
        || (m.starts_with("byte index")
            && (m.contains("out of bounds") || m.contains("char boundary")))
    {
        Some("an index out of bounds")
    } else if m.starts_with("called `Option::unwrap()` on a `None` value") {
        Some("an unwrap on None")
    } else if m.starts_with("attempt to divide by zero")
        || m.starts_with("attempt to calculate the remainder with a divisor of zero")
    {
        Some("a division by zero")
    } else if m.starts_with("attempt to") && m.contains("overflow") {
        Some("an arithmetic overflow")
    } else {
        None
    }
}

/// The finding a defect test stands for.
fn finding(api: &Api, k: &Kept) -> Option<Finding> {
    let Verdict::Defect { reason, .. } = &k.verdict else {
        return None;
    };
    let (module, function, kind) = match k.candidate.source {
        Source::Callable(i) => {
            let c = &api.callables[i];
            (c.module.clone(), c.path.clone(), "panic")
        }
        Source::Value(_) | Source::Sequence(_) | Source::Compare(_) => return None,
        Source::Example(i) => {
            let e = &api.examples[i];
            let module = api
                .modules
                .iter()
                .find(|m| m.file == e.file)
                .map(|m| m.path.clone())
                .unwrap_or_default();
            (module, e.item.clone(), "doc_example")
        }
    };
    Some(Finding {
        module,
        function,
        kind: kind.into(),
        call: k.candidate.call.clone(),
        expected: Some(match kind {
            "panic" => "no panic: its docs have no # Panics section".into(),
            _ => "the doc example runs".into(),
        }),
        actual: k
            .seen
            .panic
            .as_ref()
            .map(|(m, place)| format!("panicked at {place}: {}", first_line(m))),
        test: Some(reason.trim_start_matches("code_defect: ").to_string()),
    })
}

/// Functions with a counter no kept candidate reached.
fn unfinished(universe: &BTreeSet<Counter>, covered: &BTreeSet<Counter>) -> BTreeSet<String> {
    universe
        .difference(covered)
        .map(|(f, _)| f.clone())
        .collect()
}

/// Whether demangled function `f` is the one named `name` (`crate::m::T::name`).
fn names(f: &str, name: &str) -> bool {
    f.rsplit("::").next() == Some(name) || f.ends_with(&format!(">::{name}"))
}

/// `src/lib.rs:12` -> (`src/lib.rs`, 12).
fn split_place(place: &str) -> (&str, u32) {
    match place.rsplit_once(':') {
        Some((file, line)) => (file, line.parse().unwrap_or(0)),
        None => (place, 0),
    }
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default()
}

fn one_line(text: &str) -> String {
    cut(&text.split_whitespace().collect::<Vec<_>>().join(" "), 120)
}

/// The punctuation characters the scope's code names as char literals (`','`, `':'`), in
/// order of first appearance.
fn separators(copy: &std::path::Path, scope: &BTreeSet<&str>) -> Vec<char> {
    let mut out = Vec::new();
    for file in scope {
        let text = std::fs::read_to_string(copy.join(file)).unwrap_or_default();
        let bytes = text.as_bytes();
        for i in 0..bytes.len().saturating_sub(2) {
            let c = bytes[i + 1] as char;
            if bytes[i] == b'\''
                && bytes[i + 2] == b'\''
                && c.is_ascii_punctuation()
                && c != '\\'
                && c != '\''
                && !out.contains(&c)
            {
                out.push(c);
            }
        }
    }
    out
}

/// The string literals of some code, without escapes (the others are not worth unescaping).
fn string_literals(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(start) = rest.find('"') {
        let after = &rest[start + 1..];
        let Some(end) = after.find('"') else { break };
        let s = &after[..end];
        if !s.contains('\\') && s.len() <= 64 {
            out.push(s.to_string());
        }
        rest = &after[end + 1..];
    }
    out
}
