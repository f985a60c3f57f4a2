//! `team-testing apply [SESSION]`: copies a session's accepted tests into the repository, where the
//! project's own runner picks them up. Nothing else in the repository changes, and an existing
//! file with other content is never overwritten without `--force`. A test the session recorded as
//! unsafe (it changed something outside its own temporary folders, or the sandbox stopped it) is
//! refused by name: cut out of its file, or the whole file refused when it cannot be cut. A file
//! the layer's last run did not judge with its present content (written or edited after that run,
//! or in a layer whose executor never ran) is left out by name: no run and no file-system watch
//! ever saw it.
//!
//! `apply --fixes` applies the session's code fixes instead (`app::fixes`): the diffstat first,
//! then the patch, only onto files that are still what the fixes were made from.

use std::path::{Path, PathBuf};

use clap::Args;

use super::Location;
use crate::app::fixes;
use crate::error::Error;
use crate::session::framework::session_framework;
use crate::session::{self, SessionDir, LAYER_DIRS};
use crate::testing::runner::{ApplyFile, Runner};

#[derive(Args, Debug)]
pub struct ApplyArgs {
    /// Session id under the sessions root, or its path (default: the one active or paused).
    pub session: Option<String>,
    /// --repo: the checkout to apply into (default: the one the current folder is in; it must
    /// share history with the session's repository).
    #[command(flatten)]
    pub location: Location,
    /// Replace files that already exist with other content.
    #[arg(long)]
    pub force: bool,
    /// Say what would be copied (with --fixes: what would change), write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Apply the session's code fixes (the patch of a test-fix cycle) instead of its tests;
    /// refused when a file they touch changed since they were made.
    #[arg(long, conflicts_with_all = ["layer", "force"])]
    pub fixes: bool,
    /// Apply one layer's tests only (L1, L2 or L3).
    #[arg(long, value_name = "LAYER")]
    pub layer: Option<String>,
    /// Also apply the tests asserting the behaviour the change brought (every behaviour change,
    /// or the ones named: `--keep-new B1,B3`): the change was intended.
    #[arg(long, value_name = "ID", num_args = 0.., value_delimiter = ',')]
    pub keep_new: Option<Vec<String>>,
    /// Also apply the regression tests asserting the behaviour before the change (all, or the
    /// ones named): the change broke it, and these fail until the code is fixed.
    #[arg(long, value_name = "ID", num_args = 0.., value_delimiter = ',')]
    pub keep_old: Option<Vec<String>>,
}

/// Where apply remembers what it wrote (repository-relative path and sha256), beside the tests
/// it applies, so that a later apply may replace its own unchanged files but never one it did not
/// create or one edited since.
fn manifest_path(repo: &Path, runner: &dyn Runner) -> PathBuf {
    repo.join(runner.apply_manifest_dir(repo))
        .join(".team-testing-applied.json")
}

fn sha256(bytes: &[u8]) -> String {
    crate::artifacts::digest(bytes)
}

pub fn apply(args: ApplyArgs) -> anyhow::Result<i32> {
    let root = args.location.root();
    let session = session::resolve(&root, args.session.as_deref())?;
    let mut state = session.load_state()?;
    // Where the user says: --repo, else the checkout they stand in (never silently the
    // session's own repository when they apply into a copy).
    let cwd = std::env::current_dir()?;
    let target =
        crate::app::apply_target::resolve(&state.repo, args.location.repo.as_deref(), &cwd)
            .map_err(|e| Error::Usage(e.to_string()))?;
    if target
        != state
            .repo
            .canonicalize()
            .unwrap_or_else(|_| state.repo.clone())
    {
        println!("applying into {}", target.display());
    }
    state.repo = target;
    if !state.repo.is_dir() {
        return Err(Error::MissingRepo { path: state.repo }.into());
    }
    if args.fixes {
        return apply_fixes(&session, &state.repo, args.dry_run);
    }
    // A framework without a runner has no tests apply knows where to put.
    let runner = session_framework(&session, &state.repo)
        .ok()
        .map(crate::family::runner_for);
    let layers: Vec<&str> = match &args.layer {
        None => LAYER_DIRS.to_vec(),
        Some(l) => {
            let want = l.to_ascii_lowercase();
            let found: Vec<&str> = LAYER_DIRS
                .iter()
                .copied()
                .filter(|d| {
                    let d = d.to_ascii_lowercase();
                    d == want || d.split('-').next() == Some(want.as_str())
                })
                .collect();
            if found.is_empty() {
                return Err(Error::Usage(format!(
                    "--layer {l}: no such layer ({})",
                    LAYER_DIRS.join(", ")
                ))
                .into());
            }
            found
        }
    };
    let (mut plan, refused, left_out) = match &runner {
        Some(runner) => {
            let (planned, unjudged) = plan(&session, &state.repo, runner.as_ref(), &layers);
            let (plan, refused, mut left_out) =
                leave_out_quarantined(&session, runner.as_ref(), planned);
            left_out.extend(unjudged);
            (plan, refused, left_out)
        }
        None => (Vec::new(), Vec::new(), Vec::new()),
    };
    if let Some(runner) = &runner {
        let chosen = (args.keep_new.as_deref(), args.keep_old.as_deref());
        plan.extend(behaviour_tests(
            &session,
            &state.repo,
            runner.as_ref(),
            chosen,
        )?);
    }
    if let Some(runner) = &runner {
        let node_modules = crate::testing::deps::node_modules(&state.repo, &session.root);
        for (from, to, content) in &mut plan {
            let layer = from
                .parent()
                .and_then(Path::file_name)
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let text = String::from_utf8_lossy(content).into_owned();
            let defects = crate::team::defect_reasons(&session.root, &layer);
            let file = ApplyFile {
                dest: to.strip_prefix(&state.repo).unwrap_or(to),
                defects: &defects,
                node_modules: node_modules.as_deref(),
            };
            let changed = runner.apply_content(&text, &file);
            if changed != text {
                *content = changed.into_bytes();
            }
        }
    }
    for line in &refused {
        println!("refused: {line}");
    }
    for line in &left_out {
        println!("left out: {line}");
    }
    let (Some(runner), false) = (runner, plan.is_empty()) else {
        let which = if !refused.is_empty() {
            " that are safe to run"
        } else if !left_out.is_empty() {
            " that a run judged"
        } else {
            ""
        };
        println!(
            "nothing to apply: session {} has no generated tests{which}",
            session.id
        );
        return Ok(0);
    };
    let manifest_path = manifest_path(&state.repo, runner.as_ref());
    let mut manifest: std::collections::BTreeMap<String, String> =
        crate::util::read_json(&manifest_path).unwrap_or_default();
    let mut conflicts = Vec::new();
    for (_, to, content) in &plan {
        let current = std::fs::read(to).ok();
        let same = current.as_deref() == Some(content.as_slice());
        let rel = to
            .strip_prefix(&state.repo)
            .unwrap_or(to)
            .display()
            .to_string();
        // Ours and untouched since: a newer round may replace it.
        let ours = current
            .as_ref()
            .is_some_and(|c| manifest.get(&rel) == Some(&sha256(c)));
        if to.exists() && !same && !ours && !args.force {
            conflicts.push(to.display().to_string());
        }
    }
    if !conflicts.is_empty() {
        return Err(Error::Session(format!(
            "these files exist with other content (use --force to replace them): {}",
            conflicts.join(", ")
        ))
        .into());
    }
    for (from, to, content) in &plan {
        println!("{} -> {}", from.display(), to.display());
        if args.dry_run {
            continue;
        }
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| Error::io(format!("creating {}", parent.display()), e))?;
        }
        std::fs::write(to, content)
            .map_err(|e| Error::io(format!("writing {}", to.display()), e))?;
        let rel = to
            .strip_prefix(&state.repo)
            .unwrap_or(to)
            .display()
            .to_string();
        manifest.insert(rel, sha256(content));
    }
    if !args.dry_run {
        if let Some(parent) = manifest_path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| Error::io(format!("creating {}", parent.display()), e))?;
        }
        crate::util::atomic_write_json(&manifest_path, &manifest)?;
    }
    if !args.dry_run {
        if let Some(how) = runner.apply_support(&state.repo)? {
            println!("{how}");
        }
    }
    Ok(0)
}

/// `apply --fixes`: the diffstat, then the patch (unless `dry_run`), then what was verified.
fn apply_fixes(session: &SessionDir, repo: &Path, dry_run: bool) -> anyhow::Result<i32> {
    let plan = fixes::prepare(session, repo).map_err(Error::from)?;
    let m = &plan.manifest;
    if plan.is_empty() {
        println!(
            "nothing to apply: the code fixes of session {} change no file",
            plan.session
        );
        return Ok(0);
    }
    if plan.check == fixes::Check::AlreadyApplied {
        println!(
            "The fixes of session {} are already applied: the {} they touch {} the fixed content.",
            plan.session,
            files(m.files.len()),
            if m.files.len() == 1 { "has" } else { "have" }
        );
        print_branch(&plan);
        return Ok(0);
    }
    print_diffstat(&plan);
    let verified = fixes::apply(&plan, dry_run).map_err(Error::from)?;
    if dry_run {
        println!(
            "Dry run: the fixes apply cleanly to {}; nothing was written.",
            plan.top.display()
        );
        return Ok(0);
    }
    println!(
        "Applied to {}: the {} now {} the fixed content (sha256 checked).",
        plan.top.display(),
        files(verified.len()),
        if verified.len() == 1 { "has" } else { "have" }
    );
    print_branch(&plan);
    Ok(0)
}

fn files(n: usize) -> String {
    format!("{n} file{}", if n == 1 { "" } else { "s" })
}

/// The header (session, iterations), one line per file (status, path, +added -removed) and
/// the totals, like `git diff --stat`'s last line.
fn print_diffstat(plan: &fixes::FixPlan) {
    let m = &plan.manifest;
    let mut header = format!("Code fixes of session {}", plan.session);
    if !m.iterations.is_empty() {
        let n = m.iterations.len();
        header.push_str(&format!(": {n} iteration{}", if n == 1 { "" } else { "s" }));
    }
    if !m.branch.is_empty() {
        header.push_str(&format!(" on branch {}", m.branch));
    }
    println!("{header}");
    for it in &m.iterations {
        let subject = it.message.lines().next().unwrap_or_default();
        let short: String = it.commit.chars().take(10).collect();
        let commit = if short.is_empty() {
            String::new()
        } else {
            format!(" ({short})")
        };
        println!("  iteration {}: {subject}{commit}", it.iteration);
    }
    let width = plan.stat.iter().map(|s| s.path.len()).max().unwrap_or(0);
    let (mut added, mut removed) = (0, 0);
    for s in &plan.stat {
        let lines = match s.lines {
            Some((a, r)) => {
                added += a;
                removed += r;
                format!("+{a} -{r}")
            }
            None => "binary".to_string(),
        };
        println!("  {:<8}  {:<width$}  {lines}", s.status, s.path);
    }
    println!(
        "  {} changed, {added} insertion{}(+), {removed} deletion{}(-)",
        files(plan.stat.len()),
        if added == 1 { "" } else { "s" },
        if removed == 1 { "" } else { "s" }
    );
}

/// Where the iterations are, as a command that works pasted from any folder.
fn print_branch(plan: &fixes::FixPlan) {
    let branch = &plan.manifest.branch;
    if branch.is_empty() {
        return;
    }
    println!(
        "The fix iterations are commits on branch {branch}: `git -C {} log {}`",
        crate::hint::quote(&plan.top.to_string_lossy()),
        crate::hint::quote(branch)
    );
}

/// A planned copy: the session's file, its destination, and the bytes to write there.
type Planned = (PathBuf, PathBuf, Vec<u8>);

/// Takes out of the plan every test the session's runs took out (quarantined): cut from its file
/// (a top-level test), or the whole file refused when that cannot be done. An unsafe test is a
/// refusal; one taken out for another reason (a broken observation, a flaky test) is left out,
/// since the session never ran it either. Returns the plan with the contents to write, the
/// refusals and the tests left out, one line each naming the test and why.
/// The tests of the behaviour changes the user chose to keep: `keep` is (`--keep-new`,
/// `--keep-old`), each every change when given without ids. An id the session does not have is
/// an error that lists the ones it has.
fn behaviour_tests(
    session: &SessionDir,
    repo: &Path,
    runner: &dyn Runner,
    keep: (Option<&[String]>, Option<&[String]>),
) -> Result<Vec<Planned>, Error> {
    if keep == (None, None) {
        return Ok(Vec::new());
    }
    let path = session.root.join(crate::gen::behaviour::REPORT_FILE);
    let report: crate::gen::behaviour::BehaviourReport = match crate::util::read_json(&path) {
        Ok(r) => r,
        Err(_) => {
            println!(
                "no behaviour changes: session {} compared no base",
                session.id
            );
            return Ok(Vec::new());
        }
    };
    let ids: Vec<&str> = report.changes.iter().map(|c| c.id.as_str()).collect();
    let mut out = Vec::new();
    for (side, wanted) in [("new", keep.0), ("old", keep.1)] {
        let Some(wanted) = wanted else { continue };
        if let Some(unknown) = wanted.iter().find(|w| !ids.contains(&w.as_str())) {
            return Err(Error::Usage(format!(
                "--keep-{side} {unknown}: session {} has no such behaviour change (it has: {})",
                session.id,
                if ids.is_empty() {
                    "none".to_string()
                } else {
                    ids.join(", ")
                }
            )));
        }
        for change in &report.changes {
            if !wanted.is_empty() && !wanted.contains(&change.id) {
                continue;
            }
            let file = if side == "new" {
                &change.new_file
            } else {
                &change.old_file
            };
            let from = session.root.join(file);
            let layer = from
                .parent()
                .and_then(Path::file_name)
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let (Ok(content), Some(dest)) =
                (std::fs::read(&from), runner.apply_path(repo, &layer, &from))
            else {
                println!("left out: {}: its {side} test {file} is missing", change.id);
                continue;
            };
            out.push((from, repo.join(dest), content));
        }
    }
    Ok(out)
}

fn leave_out_quarantined(
    session: &SessionDir,
    runner: &dyn Runner,
    plan: Vec<Planned>,
) -> (Vec<Planned>, Vec<String>, Vec<String>) {
    let mut refused = Vec::new();
    let mut left_out = Vec::new();
    let mut out = Vec::new();
    'files: for (from, to, content) in plan {
        let layer_dir = from.parent().unwrap_or(&from);
        let layer = layer_dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let rel = from
            .strip_prefix(session.root.join("tests").join(&layer))
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        let mut names = std::collections::BTreeSet::new();
        let mut why = Vec::new();
        let mut unsafe_names = std::collections::BTreeSet::new();
        let text = String::from_utf8_lossy(&content).into_owned();
        for (id, what, is_unsafe) in crate::artifacts::recorded_quarantine(&session.root, &layer) {
            // mocha's ids start with the suite, not the file: a JS test is this file's when the
            // file names its title.
            let ours = crate::testing::effects::file_of(&id) == rel
                || (from.extension().is_none_or(|e| e != "py")
                    && id.split_once("::").is_some_and(|(_, name)| {
                        let title = name.rsplit(" > ").next().unwrap_or(name);
                        serde_json::to_string(title).is_ok_and(|q| text.contains(&q))
                    }));
            if !ours {
                continue;
            }
            let Some((_, name)) = id.split_once("::").filter(|(_, n)| !n.contains("::")) else {
                if is_unsafe {
                    refused.push(format!(
                        "{} (all of it): {id} is unsafe: {what}",
                        from.display()
                    ));
                    continue 'files;
                }
                continue; // a whole file taken out is not in the layer any more
            };
            // A JavaScript test's id carries its suites (`suite > test`); the file names the test.
            let name = name.rsplit(" > ").next().unwrap_or(name).to_string();
            if is_unsafe {
                unsafe_names.insert(name.clone());
            }
            why.push((is_unsafe, format!("{layer}/{id}: {what}")));
            names.insert(name);
        }
        if names.is_empty() {
            out.push((from, to, content));
            continue;
        }
        let (cut, mut missing) = runner.remove_tests(&text, &names);
        // A test a later round no longer wrote has nothing to cut; one that is there but cannot
        // be cut (a method) takes the file with it when it is unsafe.
        missing.retain(|name| {
            text.contains(&format!("def {name}("))
                || text.contains(&serde_json::to_string(name).unwrap_or_default())
        });
        if !missing.is_empty() {
            refused.push(format!(
                "{} (all of it): cannot cut out {}",
                from.display(),
                missing.join(", ")
            ));
            continue;
        }
        for (is_unsafe, line) in why {
            if is_unsafe {
                refused.push(line);
            } else {
                left_out.push(line);
            }
        }
        if runner.count_tests(&cut) == 0 {
            let all = if unsafe_names.is_empty() {
                "every test in it was taken out by the session's runs"
            } else {
                "every test in it is unsafe or was taken out"
            };
            refused.push(format!("{} (all of it): {all}", from.display()));
            continue;
        }
        out.push((from, to, cut.into_bytes()));
    }
    (out, refused, left_out)
}

/// (generated file, destination in the repository) for every test file of every layer that the
/// layer's last run judged with the content it has now, and one line for each left out (written
/// or changed after that run, or in a layer no run judged): no run, and no file-system watch,
/// ever saw those.
fn plan(
    session: &SessionDir,
    repo: &Path,
    runner: &dyn Runner,
    layers: &[&str],
) -> (Vec<Planned>, Vec<String>) {
    let mut plan = Vec::new();
    let mut left_out = Vec::new();
    for &layer in layers {
        for file in crate::artifacts::layer_files(&session.root, layer) {
            let Some(dest) = runner.apply_path(repo, layer, &file.path) else {
                continue;
            };
            match file.unjudged {
                None => plan.push((file.path, repo.join(dest), file.content)),
                Some(why) => left_out.push(format!("{layer}/{}: {why}", file.name)),
            }
        }
    }
    (plan, left_out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A test the session's runs took out never reaches the user: an unsafe one is refused, a
    /// broken observation is left out, and the rest of its file is delivered (Python and JS).
    #[test]
    fn tests_the_session_took_out_are_not_delivered() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("S");
        let layer = root.join("tests/L1-unit");
        std::fs::create_dir_all(root.join("tests/quarantine/L1-unit")).unwrap();
        std::fs::create_dir_all(&layer).unwrap();
        std::fs::write(
            layer.join("test_m.py"),
            "import m\n\n\ndef test_kept():\n    assert m.f() == 1\n\n\ndef test_observed():\n    assert m.g() == 2\n\n\ndef test_unsafe():\n    m.h()\n",
        )
        .unwrap();
        std::fs::write(
            layer.join("m.test.js"),
            "describe(\"m\", () => {\n  test(\"f() [a]\", () => {\n    f();\n  });\n\n  test(\"g() [b]\", () => {\n    g();\n  });\n});\n",
        )
        .unwrap();
        let quarantine = serde_json::json!([
            {"id": "test_m.py::test_observed", "reason": "test_defect: what the search observed did not hold"},
            {"id": "test_m.py::test_unsafe", "reason": "unsafe", "unsafe_effect": "removed /x"},
            {"id": "m::g() [b]", "reason": "test_defect: an observation that held only where it was made"},
        ]);
        std::fs::write(
            root.join("tests/quarantine/L1-unit/quarantine.json"),
            quarantine.to_string(),
        )
        .unwrap();
        let session = SessionDir {
            root: root.clone(),
            id: "S".into(),
        };
        // Each file goes through its own framework's runner, as a session of that framework.
        let python = crate::family::runner_for(crate::testing::framework::Framework::Pytest);
        let node = crate::family::runner_for(crate::testing::framework::Framework::NodeTest);
        let planned = |name: &str| {
            let from = layer.join(name);
            let content = std::fs::read(&from).unwrap();
            vec![(from, tmp.path().join("out").join(name), content)]
        };
        let (py_plan, js_plan) = (planned("test_m.py"), planned("m.test.js"));
        let (mut out, mut refused, mut left_out) =
            leave_out_quarantined(&session, python.as_ref(), py_plan);
        let (js_out, js_refused, js_left_out) =
            leave_out_quarantined(&session, node.as_ref(), js_plan);
        out.extend(js_out);
        refused.extend(js_refused);
        left_out.extend(js_left_out);
        let py = String::from_utf8(out[0].2.clone()).unwrap();
        assert!(
            py.contains("def test_kept(")
                && !py.contains("test_observed")
                && !py.contains("test_unsafe"),
            "{py}"
        );
        let js = String::from_utf8(out[1].2.clone()).unwrap();
        assert!(js.contains("f() [a]") && !js.contains("g() [b]"), "{js}");
        assert_eq!(refused, ["L1-unit/test_m.py::test_unsafe: removed /x"]);
        assert_eq!(left_out.len(), 2, "{left_out:?}");
        assert!(left_out[0].contains("test_observed") && left_out[0].contains("test_defect"));
    }
}
