//! The generator's comparison with the base of a change: the calls its search ran on HEAD are
//! replayed in a mirror of the base commit and in the mirror of HEAD, both sandboxed, and what
//! differs is written to `behaviour/changes.json`, with one test asserting the new behaviour
//! (`behaviour/new/<layer>/`) and one asserting the old (`behaviour/old/<layer>/`) per change.
//! Tests of the search whose call changed leave the layer's ordinary files: by default nothing
//! about a behaviour change is applied, the user chooses (`apply --keep-new` / `--keep-old`).
//! A comparison that cannot run says why in the record and takes nothing away.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::family::generator::{Generator, ReplayJob};
use crate::gen::behaviour::{
    compare, BehaviourChange, BehaviourReport, ReplayBody, ReplayModule, ReplayRequest,
    ReplayedModule, REPORT_FILE,
};
use crate::gen::GenResult;
use crate::session::scope::load_scope;
use crate::team::error::RoleError;
use crate::team::util::{sandbox_for, time_left};
use crate::team::RoleContext;

/// Longest a replay of one version may take.
const REPLAY_TIMEOUT: Duration = Duration::from_secs(300);

/// Compares `result`'s calls on the base and on HEAD (`head_mirror`, the search's); returns the
/// names of the search's tests whose call behaves otherwise on the base.
pub(crate) fn compare_with_base(
    ctx: &RoleContext,
    layer: &str,
    generator: &dyn Generator,
    head_mirror: &Path,
    result: &GenResult,
    framework: crate::testing::framework::Framework,
) -> BTreeSet<String> {
    let Ok(scope) = load_scope(ctx.session) else {
        return BTreeSet::new();
    };
    let base = match (&scope.base_commit, scope.is_git && !scope.whole_project) {
        (Some(base), true) => base.clone(),
        _ => return BTreeSet::new(),
    };
    let modules: Vec<ReplayModule> = result
        .modules
        .iter()
        .filter(|m| !m.calls.is_empty())
        .map(|m| ReplayModule {
            module: m.module.clone(),
            file: m.file.clone(),
            calls: m.calls.clone(),
        })
        .collect();
    if modules.is_empty() {
        return BTreeSet::new();
    }
    let started = std::time::Instant::now();
    let mut report = read_report(&ctx.session.root, &base);
    let mut changed = BTreeSet::new();
    let calls: ModuleCalls = modules
        .iter()
        .map(|m| (m.module.clone(), (m.file.clone(), m.calls.clone())))
        .collect();
    match replay_both(
        ctx,
        (layer, framework),
        generator,
        head_mirror,
        &base,
        modules,
        &mut report.added,
    ) {
        Ok(Some((head, base_run))) => {
            let new = record(
                ctx,
                layer,
                generator,
                (&calls, &head, &base_run),
                &mut report,
            );
            changed.extend(new);
        }
        Ok(None) => return BTreeSet::new(),
        Err(problem) => report.problems.push(format!("{layer}: {problem}")),
    }
    report.number();
    report.seconds += started.elapsed().as_secs_f64();
    let path = ctx.session.root.join(REPORT_FILE);
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    if let Err(e) = crate::util::atomic_write_json(&path, &report) {
        (ctx.progress)(
            "behaviour",
            None,
            Some(format!("cannot write {REPORT_FILE}: {e}")),
        );
    }
    changed
}

/// Module -> its file and the calls its search ran.
type ModuleCalls = BTreeMap<String, (String, Vec<crate::gen::behaviour::Call>)>;

/// The replays on HEAD and on the base, module by module; None when the family cannot replay.
type Replays = (Vec<ReplayedModule>, Vec<ReplayedModule>);

/// Why the comparison with the base did not run.
#[derive(Debug, thiserror::Error)]
enum CompareError {
    #[error("cannot lay out the base {base}: {cause}")]
    Base {
        base: String,
        cause: crate::git::ExportError,
    },
    #[error("cannot prepare the base's mirror: {0}")]
    Prepare(std::io::Error),
    #[error(transparent)]
    Role(#[from] RoleError),
}

fn replay_both(
    ctx: &RoleContext,
    (layer, framework): (&str, crate::testing::framework::Framework),
    generator: &dyn Generator,
    head_mirror: &Path,
    base: &str,
    modules: Vec<ReplayModule>,
    added: &mut Vec<String>,
) -> Result<Option<Replays>, CompareError> {
    let workspace = ctx.session.root.join("workspace");
    let base_mirror = workspace.join("base");
    let scratch = workspace.join(format!("behaviour-{layer}"));
    crate::git::export_commit(ctx.repo, base, &base_mirror, &scratch).map_err(|cause| {
        CompareError::Base {
            base: base.to_string(),
            cause,
        }
    })?;
    // A module the change added has nothing on the base to compare with: neither version
    // replays it.
    let (modules, new): (Vec<_>, Vec<_>) = modules.into_iter().partition(|m| {
        let module = crate::gen::ModuleRef {
            module: m.module.clone(),
            file: m.file.clone(),
        };
        generator.on_base(&base_mirror, &module)
    });
    for m in new {
        // Every layer's comparison adds to the session's one report.
        if !added.contains(&m.module) {
            added.push(m.module);
        }
    }
    if modules.is_empty() {
        return Ok(Some((Vec::new(), Vec::new())));
    }
    generator
        .prepare_mirror(ctx.repo, &ctx.session.root, &base_mirror)
        .map_err(CompareError::Prepare)?;
    let state = ctx.session.load_state().map_err(RoleError::from)?;
    let req = ReplayRequest {
        replay: ReplayBody {
            modules,
            call_timeout_s: ctx.config.generator_call_timeout_s,
            seed: state.seed,
            layer: layer.to_string(),
            framework: Some(framework.as_str().to_string()),
        },
    };
    // A family that builds its calls (Rust, Go) writes in both mirrors and its own folders.
    let writes: Vec<PathBuf> = match generator.replay_writes(&ctx.session.root, layer) {
        Some(mut dirs) => {
            for dir in &dirs {
                std::fs::create_dir_all(dir).map_err(RoleError::io("create", dir))?;
            }
            dirs.extend([head_mirror.to_path_buf(), base_mirror.clone()]);
            dirs
        }
        None => Vec::new(),
    };
    // Both versions run at once where the family's helpers can run beside each other (each
    // in a sandbox of its own); one after the other where they build in a shared folder.
    let names = [
        format!("behaviour-{layer}"),
        format!("behaviour-{layer}-base"),
    ];
    let side_by_side = generator.searches_side_by_side();
    let sandboxes = [
        sandbox_for(ctx, &names[0], generator.read_roots(ctx.repo), &writes)?,
        match side_by_side {
            true => sandbox_for(ctx, &names[1], generator.read_roots(ctx.repo), &writes)?,
            false => None,
        },
    ];
    // Each version's time is what the task has left when it starts, at most REPLAY_TIMEOUT.
    let job = |mirror| -> Result<ReplayJob, RoleError> {
        let base = mirror == base_mirror.as_path();
        Ok(ReplayJob {
            repo: ctx.repo,
            mirror,
            base,
            scratch: &scratch,
            req: &req,
            timeout: time_left(ctx.deadline)?.min(REPLAY_TIMEOUT),
            sandbox: sandboxes[usize::from(base && side_by_side)].as_ref(),
        })
    };
    let mut runs = Vec::new();
    if side_by_side {
        let jobs = [job(head_mirror)?, job(&base_mirror)?];
        runs = std::thread::scope(|s| {
            let running = jobs.each_ref().map(|job| s.spawn(|| generator.replay(job)));
            running
                .map(|r| r.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                .into()
        });
    } else {
        for mirror in [head_mirror, base_mirror.as_path()] {
            runs.push(generator.replay(&job(mirror)?));
        }
    }
    let mut versions = Vec::new();
    for run in runs {
        match run {
            None => return Ok(None),
            Some(run) => versions.push(run.map_err(RoleError::from)?.modules),
        }
    }
    let base_run = versions.pop().unwrap_or_default();
    let head = versions.pop().unwrap_or_default();
    Ok(Some((head, base_run)))
}

/// The comparison of each module into `report` (a change another layer found already is not
/// counted twice), with each new change's two tests written; the search's tests that changed.
fn record(
    ctx: &RoleContext,
    layer: &str,
    generator: &dyn Generator,
    (calls, head, base): (&ModuleCalls, &[ReplayedModule], &[ReplayedModule]),
    report: &mut BehaviourReport,
) -> BTreeSet<String> {
    let by_module: BTreeMap<&str, &ReplayedModule> =
        base.iter().map(|m| (m.module.as_str(), m)).collect();
    let mut changed = BTreeSet::new();
    for h in head {
        let Some(b) = by_module.get(h.module.as_str()) else {
            continue;
        };
        for (side, m) in [("HEAD", h), ("the base", *b)] {
            if let Some(e) = &m.import_error {
                report
                    .problems
                    .push(format!("{}: does not import on {side}: {e}", m.module));
            }
        }
        let (file, module_calls) = calls
            .get(&h.module)
            .map_or(("", &[][..]), |(f, c)| (f.as_str(), c.as_slice()));
        let compared = compare(&h.module, module_calls, h, b);
        let diff = file_diff(ctx, &report.base, file);
        report.compared += compared.compared;
        report.unchanged_tests += compared.unchanged_tests.len();
        changed.extend(compared.changed_tests);
        for change in compared.changes {
            let known = report
                .changes
                .iter()
                .any(|c| c.function == change.function && c.verdict == change.verdict);
            if known {
                continue;
            }
            let n = report.changes.len() + 1;
            let mut change = change;
            let short = crate::gen::behaviour::short_name(&change.function);
            change.hunk = crate::gen::behaviour::hunks_through(&diff, short, change.lines, 40);
            match write_tests(ctx, layer, generator, (h, b), &change, n) {
                Ok([new, old]) => (change.new_file, change.old_file) = (new, old),
                Err(e) => report
                    .problems
                    .push(format!("{}: cannot write its tests: {e}", change.function)),
            }
            report.changes.push(change);
        }
    }
    changed
}

/// The change's diff of `file` against `base`, changed lines only (git names the enclosing
/// function in each hunk's header); empty when git cannot say.
fn file_diff(ctx: &RoleContext, base: &str, file: &str) -> String {
    if file.is_empty() {
        return String::new();
    }
    crate::git::changed_lines_diff(ctx.repo, base, Some(file)).unwrap_or_default()
}

/// The change's two test files: HEAD's assertion in `behaviour/new/<layer>/`, the base's in
/// `behaviour/old/<layer>/`, named after the module and the change's number.
fn write_tests(
    ctx: &RoleContext,
    layer: &str,
    generator: &dyn Generator,
    (head, base): (&ReplayedModule, &ReplayedModule),
    change: &BehaviourChange,
    n: usize,
) -> std::io::Result<[String; 2]> {
    let mut written = [String::new(), String::new()];
    for (i, (side, module, test)) in [
        ("new", head, &change.new_test),
        ("old", base, &change.old_test),
    ]
    .into_iter()
    .enumerate()
    {
        let keep = BTreeSet::from([test.clone()]);
        let Some(text) = generator.keep_only(&module.source, &keep) else {
            return Err(std::io::Error::other(format!(
                "the {side} test {test} is not in its replay's file"
            )));
        };
        let path = tests_file(&ctx.session.root, side, layer, &module.test_file, n);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        crate::util::write_nofollow(&path, text.as_bytes())?;
        let rel = path.strip_prefix(&ctx.session.root).unwrap_or(&path);
        written[i] = rel.display().to_string();
    }
    Ok(written)
}

/// `behaviour/<side>/<layer>/test_pricing_b1_new.py`: the file of change `n` (its id `B<n>`
/// until the report renumbers; the file keeps the number it was written with). The mark goes
/// before what makes the name a test file's: `pricing_b1_new.test.js`, `pricing_tt_b1_new_test.go`.
pub(crate) fn tests_file(
    session: &Path,
    side: &str,
    layer: &str,
    test_file: &str,
    n: usize,
) -> PathBuf {
    let (stem, ext) = test_file.split_once('.').unwrap_or((test_file, "py"));
    let (stem, suffix) = match stem.strip_suffix("_test") {
        Some(stem) => (stem, "_test"),
        None => (stem, ""),
    };
    session
        .join("behaviour")
        .join(side)
        .join(layer)
        .join(format!("{stem}_b{n}_{side}{suffix}.{ext}"))
}

fn read_report(session: &Path, base: &str) -> BehaviourReport {
    crate::util::read_json::<BehaviourReport>(&session.join(REPORT_FILE)).unwrap_or_else(|_| {
        BehaviourReport {
            base: base.to_string(),
            ..Default::default()
        }
    })
}

#[cfg(test)]
mod tests {
    use crate::family;
    use crate::gen::ModuleRef;
    use crate::testing::framework::Family;

    fn on_base(family: Family, base: &[&str], module: &str, file: &str) -> bool {
        let dir = tempfile::tempdir().unwrap();
        for f in base {
            let path = dir.path().join(f);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "").unwrap();
        }
        let generator = family::of(family).generator().unwrap();
        let module = ModuleRef {
            module: module.into(),
            file: file.into(),
        };
        generator.on_base(dir.path(), &module)
    }

    /// A module the change moved is the same module on the base, as each family's replay finds
    /// it; only one the change added is new.
    #[test]
    fn a_module_is_on_the_base_as_the_familys_replay_finds_it() {
        use Family::*;
        let ops = ["calc/ops.py"];
        assert!(on_base(Python, &ops, "calc.ops", "calc/ops/__init__.py"));
        assert!(on_base(
            Python,
            &["src/calc/ops.py"],
            "calc.ops",
            "calc/ops.py"
        ));
        assert!(!on_base(Python, &ops, "calc.scale", "calc/scale.py"));
        let go = ["pkg/a.go", "pkg/a_test.go", "other/b.go"];
        assert!(on_base(Go, &go, "pkg", "pkg/b.go"));
        assert!(!on_base(Go, &["pkg/a_test.go"], "pkg", "pkg/b.go"));
        assert!(on_base(Cargo, &["src/foo.rs"], "foo", "src/foo/mod.rs"));
        assert!(on_base(Cargo, &["src/foo/mod.rs"], "foo", "src/foo.rs"));
        assert!(!on_base(Cargo, &["src/foo.rs"], "bar", "src/bar.rs"));
        assert!(on_base(Node, &["lib/a.js"], "lib/a", "lib/a.js"));
        assert!(!on_base(Node, &["lib/a.js"], "lib/b", "lib/b.js"));
    }
}
