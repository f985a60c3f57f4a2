//! Mutation analysis and minimization of the session's suites, done by the analyst before
//! the report. The project's own tests and each layer's generated tests run against the same
//! mutants of the modules in scope (sandboxed, in a mirror, within a budget); a generated test
//! that adds no line, arc or killed mutant beyond the project's tests and the tests kept before it
//! is dropped (greedy set cover, as Pynguin minimizes), so the combined suite kills the same
//! mutants and covers the same lines with fewer tests. Failing tests (findings) are always kept.
//! The figures go to `results/mutation.json`; the unminimized files stay in
//! `workspace/unminimized/<layer>/`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::artifacts::{
    self, CoverageRecord, KeptTest, LayerMutation, MutationRecord, SuiteScore, Survivor,
    MUTATION_FILE,
};
use crate::family::suites::{SuiteAnalysis, SuiteJob, SuiteMutations};
use crate::family::{Capability, Support};
use crate::tasks::LAYER_DIRS;
use crate::team::error::RoleError;
use crate::team::util::{sandbox_for, time_left};
use crate::team::RoleContext;
use crate::testing::framework::Framework;
use crate::util::{atomic_write_json, mkdirs, read_json};

/// One mutant's run of the tests that reach it, at least; a mutant that makes them hang is
/// killed.
const PER_MUTANT: Duration = Duration::from_secs(10);

/// What the analysis came to.
pub(crate) enum Mutation {
    Done(Box<MutationRecord>),
    /// Why it did not run.
    NotRun(String),
}

/// A mutant's identity across suites: (repository-relative file, mutation point).
type Key = (String, usize);

/// What a test covers or kills, as one set for set cover.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Element {
    Line(String, u32),
    Arc(String, i64, i64),
    Kill(Key),
}

pub(crate) fn run(ctx: &RoleContext) -> Result<Mutation, RoleError> {
    let started = Instant::now();
    let session = &ctx.session.root;
    let results = artifacts::runs(session);
    // The session's framework, as its layers ran; its family's suite analysis does the runs.
    let framework = LAYER_DIRS
        .iter()
        .filter_map(|layer| results.of_layer(layer).last())
        .find_map(|run| Framework::parse(&run.framework));
    let Some(framework) = framework else {
        return Ok(Mutation::NotRun("no layer ran".into()));
    };
    let family = crate::family::of(framework.family());
    let Some(analysis) = family.suite_analysis() else {
        let why = match family.support(Capability::Mutation) {
            Support::NotYet(why) => why,
            Support::Built => "the family hands out no suite analysis",
        };
        return Ok(Mutation::NotRun(why.into()));
    };
    let mut layers: Vec<(String, PathBuf)> = Vec::new();
    let mut modules: BTreeSet<String> = BTreeSet::new();
    for layer in LAYER_DIRS {
        let Some(run) = results.of_layer(layer).last() else {
            continue;
        };
        let dir = session.join("tests").join(layer);
        if analysis.test_files(&dir).is_empty() {
            continue;
        }
        if let Some(cov) = run
            .coverage_file()
            .and_then(|rel| read_json::<CoverageRecord>(&session.join(rel)).ok())
        {
            let code = cov.files.into_iter().map(|f| f.path);
            modules.extend(code.filter(|p| analysis.is_code(p) && !analysis.is_entry_point(p)));
        }
        layers.push((layer.to_string(), dir));
    }
    if layers.is_empty() || modules.is_empty() {
        return Ok(Mutation::NotRun(format!(
            "no generated {} tests with measured modules",
            family.name()
        )));
    }
    if !ctx.sandbox.enabled {
        return Ok(Mutation::NotRun(
            "mutation analysis needs the sandbox: a mutant can turn harmless code into code that writes anywhere".into(),
        ));
    }
    let tools = crate::family::toolchain(ctx.repo, Some(framework));
    if let Some(why) = analysis.unready(&tools) {
        return Ok(Mutation::NotRun(why));
    }
    let workspace = session.join("workspace");
    let mirror = workspace.join("mutation");
    let scratch = workspace.join("mutation.tmp");
    crate::workspace::mirror(ctx.repo, &mirror, &BTreeMap::new()).map_err(|cause| {
        RoleError::Mirror {
            into: mirror.clone(),
            cause,
        }
    })?;
    mkdirs(&scratch)?;
    let sandbox = sandbox_for(
        ctx,
        "mutation",
        analysis.sandbox_reads(&tools, ctx.repo),
        &[mirror.clone(), scratch.clone()],
    )?;
    let module_paths: Vec<PathBuf> = modules.iter().map(|m| mirror.join(m)).collect();
    let seed = ctx.session.load_state().map(|s| s.seed).unwrap_or(1);
    let budget = Duration::from_secs_f64(ctx.config.mutation_budget_s.max(0.0))
        .min(time_left(ctx.deadline)?.mul_f64(0.5));
    let baseline_files = baseline_test_files(session, analysis, ctx.repo, framework);
    let suites = layers.len() + usize::from(!baseline_files.is_empty());
    let share = budget.div_f64(suites as f64);
    let s = |p: &Path| p.to_string_lossy().into_owned();
    let suite = |name: String, cwd: PathBuf, own_config: bool, files: Vec<String>| SuiteJob {
        name,
        tools: &tools,
        scratch: &scratch,
        mirror: &mirror,
        repo: ctx.repo,
        session,
        cwd,
        own_config,
        files,
        modules: &module_paths,
        seed,
        budget: share,
        per_mutant: PER_MUTANT,
        max_mutants: ctx.config.mutation_max_mutants,
        workers: ctx.config.mutation_workers.max(1),
        sandbox: sandbox.as_ref(),
        trace_timeout: None,
    };
    // The project's own suite first (when it has tests), then each layer's.
    let mut jobs = Vec::new();
    let has_base = !baseline_files.is_empty();
    if has_base {
        jobs.push(suite(
            "baseline".into(),
            mirror.clone(),
            true,
            baseline_files,
        ));
    }
    for (layer, dir) in &layers {
        let files = analysis
            .test_files(dir)
            .iter()
            .filter_map(|f| f.strip_prefix(dir).ok().map(&s))
            .collect();
        jobs.push(suite(layer.clone(), dir.clone(), false, files));
    }
    let mut analysed = analysis.analyse_all(&jobs).into_iter();
    let mut problems = Vec::new();
    let mut base = None;
    if has_base {
        match analysed.next() {
            Some(Ok(m)) => base = Some(m),
            Some(Err(e)) => problems.push(e.to_string()),
            None => {}
        }
    }
    let mut generated = Vec::new();
    for ((layer, dir), result) in layers.iter().zip(analysed) {
        match result {
            Ok(m) => generated.push((layer.clone(), dir.clone(), m)),
            Err(e) => problems.push(e.to_string()),
        }
    }
    if generated.is_empty() {
        return Ok(Mutation::NotRun(problems.join("; ")));
    }
    let rel = |file: &str| -> String {
        Path::new(file)
            .strip_prefix(&mirror)
            .map(&s)
            .unwrap_or_else(|_| file.to_string())
    };
    let mut record = combine(base.as_ref(), &generated, &rel);
    record.modules = modules.into_iter().collect();
    record.problems.extend(problems);
    for layer in &mut record.layers {
        let (_, dir, raw) = generated
            .iter()
            .find(|(l, _, _)| *l == layer.layer)
            .expect("a layer of the record");
        let before = artifacts::snapshot(dir);
        drop_tests(analysis, session, &layer.layer, dir, &layer.dropped)?;
        let kept: Vec<String> = layer.kept.iter().map(|k| k.test.clone()).collect();
        layer.assertions_dropped =
            prune_assertions(analysis, session, &layer.layer, dir, &kept, raw)?;
        layer.rewritten = artifacts::rewrites(&before, &artifacts::snapshot(dir));
    }
    record.duration_s = started.elapsed().as_secs_f64();
    atomic_write_json(&session.join(MUTATION_FILE), &record)?;
    let mut traces: Vec<(String, &SuiteMutations)> = Vec::new();
    if let Some(b) = &base {
        traces.push(("baseline".into(), b));
    }
    traces.extend(generated.iter().map(|(l, _, m)| (l.clone(), m)));
    let changed = super::localise::changed_locations(ctx.session, ctx.repo);
    localisation(session, &results, &traces, &rel, (&mirror, &changed))?;
    Ok(Mutation::Done(Box::new(record)))
}

/// Writes the fault localisation of the failing tests the traces hold (none: nothing written).
fn localisation(
    session: &Path,
    results: &artifacts::SessionResults,
    traces: &[(String, &SuiteMutations)],
    rel: &dyn Fn(&str) -> String,
    (mirror, changed): (&Path, &std::collections::BTreeSet<String>),
) -> Result<(), RoleError> {
    let mut raised = BTreeMap::new();
    let baseline = read_json::<artifacts::RunRecord>(&session.join("results/baseline.json")).ok();
    let records = results.runs.iter().map(|(_, r)| r).chain(baseline.as_ref());
    for t in records.flat_map(|r| r.tests()) {
        if let Some(at) = t.evidence.as_ref().and_then(|e| e.location.clone()) {
            raised.insert(t.id.clone(), at);
        }
    }
    let found = super::localise::localise(traces, &raised, rel, (mirror, changed));
    if found.is_empty() {
        return Ok(());
    }
    let md = session.join("analysis/fault-localisation.md");
    mkdirs(&session.join("analysis"))?;
    crate::util::atomic_write(&md, super::localise::markdown(&found).as_bytes())?;
    atomic_write_json(
        &session.join(artifacts::LOCALISATION_FILE),
        &artifacts::LocalisationRecord { tests: found },
    )?;
    Ok(())
}

/// A test written for a scenario of the plan (`test_at_001_….py`): it traces a requirement, so
/// it is kept whole whatever it adds to coverage or kills.
fn traces_a_scenario(test_id: &str) -> bool {
    test_id
        .split("::")
        .next()
        .and_then(|f| f.rsplit('/').next())
        .is_some_and(|f| f.starts_with("test_at_"))
}

/// The project's own test files, as the baseline run found them.
fn baseline_test_files(
    session: &Path,
    analysis: &dyn SuiteAnalysis,
    repo: &Path,
    framework: Framework,
) -> Vec<String> {
    let Ok(record) = read_json::<artifacts::RunRecord>(&session.join("results/baseline.json"))
    else {
        return Vec::new();
    };
    let files: BTreeSet<String> = record
        .tests()
        .iter()
        .filter_map(|t| t.file.clone())
        .filter(|f| analysis.is_own_language(f))
        .collect();
    if files.is_empty() && !record.tests().is_empty() {
        // The runner's report names no files (mocha's JUnit): the project's test files, as
        // `mutate` finds them.
        let project = crate::testing::project_files::of_repo(repo, Some(framework));
        return crate::family::suites::own_test_files(analysis, &project);
    }
    files.into_iter().collect()
}

/// Scores and minimization from the raw results; `rel` makes a mirror path repository-relative.
fn combine(
    base: Option<&SuiteMutations>,
    generated: &[(String, PathBuf, SuiteMutations)],
    rel: &dyn Fn(&str) -> String,
) -> MutationRecord {
    // The mutants every suite ran (one with an error in any suite is left out of every score).
    let keys = |m: &SuiteMutations| -> BTreeSet<Key> {
        m.mutants
            .iter()
            .filter(|x| x.status != "error")
            .map(|x| (rel(&x.file), x.index))
            .collect()
    };
    let mut evaluated = keys(&generated[0].2);
    for m in base.into_iter().chain(generated.iter().map(|(_, _, m)| m)) {
        evaluated = evaluated.intersection(&keys(m)).cloned().collect();
    }
    let total = evaluated.len();
    let kills = |m: &SuiteMutations| -> BTreeMap<String, BTreeSet<Key>> {
        let mut by_test: BTreeMap<String, BTreeSet<Key>> = BTreeMap::new();
        for x in &m.mutants {
            let key = (rel(&x.file), x.index);
            if evaluated.contains(&key) {
                for t in &x.killed_by {
                    by_test.entry(t.clone()).or_default().insert(key.clone());
                }
            }
        }
        by_test
    };
    let elements = |m: &SuiteMutations, test: &str, killed: &BTreeMap<String, BTreeSet<Key>>| {
        let mut set = BTreeSet::new();
        if let Some(reach) = m.tests.get(test) {
            for (file, r) in &reach.reached {
                let file = rel(file);
                set.extend(r.lines.iter().map(|l| Element::Line(file.clone(), *l)));
                set.extend(
                    r.arcs
                        .iter()
                        .map(|(a, b)| Element::Arc(file.clone(), *a, *b)),
                );
            }
        }
        if let Some(k) = killed.get(test) {
            set.extend(k.iter().cloned().map(Element::Kill));
        }
        set
    };
    let passing = |m: &SuiteMutations| -> Vec<String> {
        m.tests
            .iter()
            .filter(|(_, t)| t.outcome == "passed")
            .map(|(id, _)| id.clone())
            .collect()
    };
    let killed_set = |killed: &BTreeMap<String, BTreeSet<Key>>, tests: &[String]| {
        tests
            .iter()
            .filter_map(|t| killed.get(t))
            .flatten()
            .cloned()
            .collect::<BTreeSet<Key>>()
    };
    let mut record = MutationRecord {
        mutants: total,
        ..MutationRecord::default()
    };
    let (base_kills, base_covered) = match base {
        Some(b) => {
            let killed = kills(b);
            let tests = passing(b);
            let mut covered = BTreeSet::new();
            for t in &tests {
                covered.extend(elements(b, t, &killed));
            }
            let k = killed_set(&killed, &tests);
            record.baseline = Some(SuiteScore::of(tests.len(), k.len(), total));
            (k, covered)
        }
        None => (BTreeSet::new(), BTreeSet::new()),
    };
    let mut all_kept_kills: BTreeSet<Key> = BTreeSet::new();
    let mut kept_tests = 0;
    for (layer, _, m) in generated {
        let killed = kills(m);
        let tests = passing(m);
        let candidates: Vec<(String, BTreeSet<Element>)> = tests
            .iter()
            .map(|t| (t.clone(), elements(m, t, &killed)))
            .collect();
        // Only what was measured can be judged redundant: a test that reaches no line in process
        // (an end-to-end test runs the program in a child) stays, and so does all of L3.
        let (measured, unmeasured): (Vec<_>, Vec<_>) =
            candidates.into_iter().partition(|(t, els)| {
                layer != "L3-e2e"
                    && !traces_a_scenario(t)
                    && els.iter().any(|e| matches!(e, Element::Line(..)))
            });
        let gains = set_cover(&base_covered, &measured);
        let unmeasured: Vec<String> = unmeasured.into_iter().map(|(t, _)| t).collect();
        let kept: Vec<String> = gains
            .iter()
            .map(|k| k.test.clone())
            .chain(unmeasured.iter().cloned())
            .collect();
        let before = killed_set(&killed, &tests);
        let after = killed_set(&killed, &kept);
        let union = |k: &BTreeSet<Key>| base_kills.union(k).count();
        let score = |n: usize| SuiteScore::of(0, n, total).score;
        record.layers.push(LayerMutation {
            layer: layer.clone(),
            before: SuiteScore::of(tests.len(), before.len(), total),
            after: SuiteScore::of(kept.len(), after.len(), total),
            combined_before: score(union(&before)),
            combined_after: score(union(&after)),
            dropped: tests
                .iter()
                .filter(|t| !kept.contains(t))
                .cloned()
                .collect(),
            kept: gains,
            unmeasured,
            assertions_dropped: Vec::new(),
            rewritten: BTreeMap::new(),
        });
        kept_tests += kept.len();
        all_kept_kills.extend(after);
    }
    record.generated = SuiteScore::of(kept_tests, all_kept_kills.len(), total);
    let everything: BTreeSet<Key> = base_kills.union(&all_kept_kills).cloned().collect();
    record.combined = SuiteScore::of(
        kept_tests + record.baseline.as_ref().map_or(0, |b| b.tests),
        everything.len(),
        total,
    );
    let mut seen = BTreeSet::new();
    for x in &generated[0].2.mutants {
        let key = (rel(&x.file), x.index);
        if !evaluated.contains(&key) || everything.contains(&key) || !seen.insert(key.clone()) {
            continue;
        }
        if x.status == "no_coverage" {
            record.no_coverage += 1;
        }
        if record.survivors.len() < 20 {
            record.survivors.push(Survivor {
                location: format!("{}:{}", key.0, x.line),
                operator: x.operator.clone(),
            });
        }
    }
    record.exhausted = base.is_some_and(|b| b.exhausted) || generated.iter().any(|g| g.2.exhausted);
    for m in base.into_iter().chain(generated.iter().map(|(_, _, m)| m)) {
        record.problems.extend(m.problems.iter().cloned());
    }
    record
}

/// Greedy set cover: the tests, in the order they add the most not yet covered, until none adds
/// anything beyond `covered`. Ties go to the earlier test, so the result is deterministic.
fn set_cover(covered: &BTreeSet<Element>, tests: &[(String, BTreeSet<Element>)]) -> Vec<KeptTest> {
    let mut covered = covered.clone();
    let mut left: Vec<&(String, BTreeSet<Element>)> = tests.iter().collect();
    let mut kept = Vec::new();
    loop {
        let best = left
            .iter()
            .enumerate()
            .map(|(i, (_, els))| (els.difference(&covered).count(), i))
            .max_by_key(|&(gain, i)| (gain, std::cmp::Reverse(i)));
        let Some((_, i)) = best.filter(|&(gain, _)| gain > 0) else {
            break;
        };
        let (id, els) = left.remove(i);
        let mut gain = KeptTest {
            test: id.clone(),
            ..KeptTest::default()
        };
        for e in els.difference(&covered) {
            match e {
                Element::Line(..) => gain.new_lines += 1,
                Element::Arc(..) => gain.new_arcs += 1,
                Element::Kill(_) => gain.new_kills += 1,
            }
        }
        covered.extend(els.iter().cloned());
        kept.push(gain);
    }
    kept
}

/// Pynguin's assertion minimization: in a kept test with several assertions, an assertion that
/// noticed no mutant while another assertion of the test did goes (the test's kills stay: each
/// was noticed by an assertion that stays). Only single-line `assert` statements of the test's
/// own body are touched, and a test keeps at least one. Returns `file::test:line` of each.
fn prune_assertions(
    analysis: &dyn SuiteAnalysis,
    session: &Path,
    layer: &str,
    dir: &Path,
    kept: &[String],
    raw: &SuiteMutations,
) -> Result<Vec<String>, RoleError> {
    let mut noticed: BTreeMap<&str, BTreeSet<u32>> = BTreeMap::new();
    for m in raw.mutants.iter().filter(|m| m.status == "killed") {
        for (test, line) in &m.killed_at {
            noticed.entry(test.as_str()).or_default().insert(*line);
        }
    }
    let mut by_file: BTreeMap<&str, Vec<(&str, &BTreeSet<u32>)>> = BTreeMap::new();
    for test in kept.iter().filter(|t| !traces_a_scenario(t)) {
        let parts: Vec<&str> = test.split("::").collect();
        if let ([file, name], Some(lines)) = (parts.as_slice(), noticed.get(test.as_str())) {
            by_file.entry(file).or_default().push((name, lines));
        }
    }
    let mut dropped = Vec::new();
    for (file, tests) in by_file {
        let path = dir.join(file);
        let Ok(source) = std::fs::read_to_string(&path) else {
            continue;
        };
        let Some((pruned, gone)) = analysis.prune_assertions(&source, &tests) else {
            continue;
        };
        let keep = session
            .join("workspace")
            .join(crate::session::UNMINIMIZED_DIR)
            .join(layer)
            .join(file);
        if !keep.exists() {
            if let Some(parent) = keep.parent() {
                mkdirs(parent)?;
            }
            crate::util::write_nofollow(&keep, source.as_bytes())
                .map_err(RoleError::io("write", &keep))?;
        }
        crate::util::atomic_write(&path, pruned.as_bytes())?;
        dropped.extend(gone.into_iter().map(|g| format!("{file}::{g}")));
    }
    Ok(dropped)
}

/// Removes the dropped tests (top-level functions, `file.py::name`) from the layer's files, after
/// keeping the unminimized files in `workspace/unminimized/<layer>/`.
fn drop_tests(
    analysis: &dyn SuiteAnalysis,
    session: &Path,
    layer: &str,
    dir: &Path,
    dropped: &[String],
) -> Result<(), RoleError> {
    let mut by_file: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    for id in dropped {
        let parts: Vec<&str> = id.split("::").collect();
        if let [file, name] = parts.as_slice() {
            if !analysis.is_one_case_of_many(name) {
                by_file.entry(file).or_default().insert(name.to_string());
            }
        }
    }
    if by_file.is_empty() {
        return Ok(());
    }
    let keep = session
        .join("workspace")
        .join(crate::session::UNMINIMIZED_DIR)
        .join(layer);
    mkdirs(&keep)?;
    for (file, names) in by_file {
        let path = dir.join(file);
        let source = std::fs::read_to_string(&path).map_err(RoleError::io("read", &path))?;
        let copy = keep.join(file);
        if let Some(parent) = copy.parent() {
            mkdirs(parent)?;
        }
        // A later analyst (after deepen) minimizes again: the first copy is the unminimized one.
        if !copy.exists() {
            crate::util::write_nofollow(&copy, source.as_bytes())
                .map_err(RoleError::io("write", &copy))?;
        }
        match analysis.remove_tests(&source, &names) {
            Some(minimized) => crate::util::atomic_write(&path, minimized.as_bytes())?,
            None => std::fs::remove_file(&path).map_err(RoleError::io("remove", &path))?,
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(n: u32) -> Element {
        Element::Line("m.py".into(), n)
    }

    #[test]
    fn set_cover_keeps_the_fewest_tests_that_cover_everything_beyond_the_baseline() {
        let base: BTreeSet<Element> = [line(1)].into();
        let tests = vec![
            ("a".to_string(), [line(1)].into()),
            ("b".to_string(), [line(2)].into()),
            ("c".to_string(), [line(2), line(3)].into()),
            (
                "d".to_string(),
                [line(3), Element::Kill(("m.py".into(), 4))].into(),
            ),
        ];
        // c adds two, then d adds the kill; a adds nothing beyond the baseline, b nothing beyond c.
        let kept = set_cover(&base, &tests);
        let names: Vec<&str> = kept.iter().map(|k| k.test.as_str()).collect();
        assert_eq!(names, vec!["c", "d"]);
        assert_eq!((kept[1].new_lines, kept[1].new_kills), (0, 1));
        assert!(set_cover(&base, &tests[..1]).is_empty());
    }
}
