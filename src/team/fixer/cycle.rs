//! The test-and-fix loop (FIX, step `cycle`): run the suite in a mirror of the worktree,
//! localise the failures, pick a strategy, ask the agent chain for a fix, write it into the
//! worktree, validate it (L0), re-run the tests it can affect, then commit an improvement, roll
//! back a regression, or drop the change; until the gate passes or the iterations run out. The
//! whole suite runs once more at the end. Every step is recorded in `iteration-state.json`
//! after its commit, so a killed loop resumes at its last recorded commit.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::plan::{self, Failure, FixPlan};
use super::prompt::{self, PromptInput};
use super::strategy::{self, Gate, Situation};
use super::suite::{self, Suite, SuiteResults};
use super::worktree::{self, Worktree};
use super::FixError;
use crate::agents::call::{call, CallInput};
use crate::artifacts::{
    CycleStatus, FullRun, Iteration, IterationOutcome, IterationState, NextAction,
};
use crate::family::suites::SuiteTrace;
use crate::team::util::{sandbox_for, time_left};
use crate::team::RoleContext;
use crate::testing::classify::Criticality;
use crate::testing::framework::Framework;
use crate::testing::toolchain::Toolchain;
use crate::util::{atomic_write, atomic_write_json, mkdirs};

/// Iterations when neither `--max-iterations` nor the task says.
pub const DEFAULT_MAX_ITERATIONS: u32 = 10;
/// A test run's budget, at most.
const RUN_TIMEOUT: Duration = Duration::from_secs(600);

/// How the loop ended, for the task's outcome.
pub struct CycleEnd {
    pub state: IterationState,
}

/// What one loop needs, set up once.
struct Loop<'a> {
    ctx: &'a RoleContext<'a>,
    session: PathBuf,
    /// None with the built-in backend only: nothing will change, so no worktree is made and
    /// the code is the repository's (read through a mirror).
    worktree: Option<Worktree>,
    /// The worktree, or the repository when there is none.
    code: PathBuf,
    /// The session's generated test files (mirror-relative), run against the fixed code at the
    /// end.
    session_tests: Vec<String>,
    suite: Suite<'a>,
    state: IterationState,
    results: SuiteResults,
    /// The project's framework: its family's checks judge each change.
    framework: Framework,
    /// The session's change (`file:line`): first among equally suspicious lines.
    changed: std::collections::BTreeSet<String>,
}

pub fn run(
    ctx: &RoleContext,
    framework: Framework,
    tools: &Toolchain,
    analysis: &'static dyn SuiteTrace,
) -> Result<CycleEnd, FixError> {
    let session = ctx.session.root.clone();
    let workspace = session.join("workspace").join("fix");
    // Beside the workspace, not in it: archiving a session removes its workspace copies, and
    // the worktree is a deliverable.
    let wt_path = session.join("worktree");
    let mirror = workspace.join("mirror");
    let scratch = workspace.join("scratch");
    for dir in [&mirror, &scratch] {
        mkdirs(dir)?;
    }
    let max_iterations = ctx
        .session
        .load_state()
        .ok()
        .and_then(|s| s.controls.max_iterations)
        .unwrap_or(DEFAULT_MAX_ITERATIONS);
    let has_agent = ctx.agents.chain("fixer").iter().any(|b| !b.is_builtin());
    let (state, worktree) = if has_agent {
        let (state, wt) = open_or_make(ctx, &wt_path, &scratch)?;
        (state, Some(wt))
    } else {
        let state = IterationState {
            version: 1,
            ..IterationState::load(&session)
                .filter(|s| s.current_task == ctx.task.id)
                .unwrap_or_default()
        };
        (state, None)
    };
    let code = worktree
        .as_ref()
        .map_or_else(|| ctx.repo.to_path_buf(), Worktree::code);
    let sandbox = sandbox_for(
        ctx,
        "fix",
        analysis.sandbox_reads(tools, ctx.repo),
        &[mirror.clone(), scratch.clone()],
    )?;
    let carried = super::carried::tests(&session, analysis);
    let suite = Suite {
        analysis,
        tools,
        sandbox: sandbox.as_ref(),
        worktree: &code,
        repo: ctx.repo,
        session: &ctx.session.root,
        mirror,
        scratch,
        project_tests: suite::project_test_files(analysis, &code, framework),
        carried: carried.files,
        carried_ids: carried.defect_ids,
    };
    if suite.everything().is_empty() {
        return Err(FixError::NoTests);
    }
    let session_tests = carried.test_files;
    let mut lp = Loop {
        ctx,
        session: session.clone(),
        worktree,
        code: code.clone(),
        session_tests,
        suite,
        state,
        results: SuiteResults::default(),
        framework,
        changed: crate::team::shared::localise::changed_locations(ctx.session, ctx.repo),
    };
    lp.state.current_task = ctx.task.id.clone();
    lp.state.max_iterations = max_iterations;
    // A retry of a loop that ended keeps its result; only the delivery is written again (a kill
    // may have come between the last record and it).
    let ended =
        lp.state.next_action == NextAction::Complete && lp.state.status != CycleStatus::Running;
    if !ended {
        lp.start()?;
        while lp.state.next_action == NextAction::ExecuteFixTask {
            lp.iterate()?;
        }
        if lp.state.next_action == NextAction::FinalValidation {
            lp.final_validation()?;
        }
    }
    if let Some(wt) = &lp.worktree {
        super::deliver::write(&session, wt, &lp.state)?;
    }
    lp.state.summary = summary(&lp.state);
    lp.save()?;
    Ok(CycleEnd { state: lp.state })
}

/// The worktree and the state of an earlier attempt at this session's loop, reset to its last
/// recorded commit; or a new worktree and a fresh state.
fn open_or_make(
    ctx: &RoleContext,
    wt_path: &Path,
    scratch: &Path,
) -> Result<(IterationState, Worktree), FixError> {
    let session = &ctx.session.root;
    // The same task again (a resume, a retry): its worktree and state go on. Another cycle task
    // of the session (`fix` once more) starts afresh.
    if let Some(state) = IterationState::load(session).filter(|s| s.current_task == ctx.task.id) {
        let wt = Worktree {
            path: wt_path.to_path_buf(),
            branch: state.branch.clone(),
            prefix: state.prefix.clone(),
        };
        if !state.base_commit.is_empty() && wt.is_usable() {
            let recorded = recorded_head(&state);
            // Whatever a killed run did after its last record goes: it runs again.
            wt.reset_to(&recorded)?;
            (ctx.progress)(
                "resume",
                None,
                Some(format!(
                    "resuming the test-fix loop after iteration {} at {}",
                    state.iterations.last().map_or(0, |i| i.iteration),
                    &recorded[..recorded.len().min(12)]
                )),
            );
            return Ok((state, wt));
        }
    }
    let branch = worktree::free_branch(ctx.repo, &ctx.session.id, &ctx.task.id);
    let made = worktree::make(ctx.repo, wt_path, &branch, scratch)?;
    let state = IterationState {
        version: 1,
        current_task: ctx.task.id.clone(),
        worktree: wt_path.display().to_string(),
        prefix: made.worktree.prefix.clone(),
        branch,
        user_head: made.user_head,
        base_commit: made.base.clone(),
        best_commit: made.base,
        ..IterationState::default()
    };
    state.save(session)?;
    Ok((state, made.worktree))
}

/// The last commit the state records (the best iteration's, or a rollback's).
fn recorded_head(state: &IterationState) -> String {
    state
        .iterations
        .iter()
        .rev()
        .find_map(|i| i.rollback_commit.clone().or_else(|| i.commit.clone()))
        .unwrap_or_else(|| state.base_commit.clone())
}

impl Loop<'_> {
    /// The worktree of a loop with an agent (one without stops before anything changes).
    fn wt(&self) -> &Worktree {
        self.worktree
            .as_ref()
            .expect("only a loop with an agent backend changes code, and it has its worktree")
    }

    fn save(&self) -> Result<(), FixError> {
        self.state.save(&self.session)?;
        Ok(())
    }

    fn progress(&self, phase: &str, detail: String) {
        let pct = (self.state.max_iterations > 0).then(|| {
            let done = self.state.fixes().count() as f64;
            (done * 100.0 / self.state.max_iterations as f64).min(99.0)
        });
        (self.ctx.progress)(phase, pct, Some(detail));
    }

    fn run_timeout(&self) -> Result<Duration, FixError> {
        Ok(time_left(self.ctx.deadline)?.mul_f64(0.5).min(RUN_TIMEOUT))
    }

    /// Iteration 0 (the whole suite before any fix), or on resume the whole suite at the last
    /// recorded commit, which rebuilds the per-test results the state does not keep.
    fn start(&mut self) -> Result<(), FixError> {
        let resumed = !self.state.iterations.is_empty();
        self.progress(
            "progressive",
            format!(
                "{}: running the whole suite ({} test files)",
                if resumed { "resume" } else { "iteration 0" },
                self.suite.everything().len()
            ),
        );
        let (results, took) = self.suite.run(None, "initial", self.run_timeout()?, &[])?;
        self.results = results;
        if !resumed {
            let rate = self.results.pass_rate();
            self.state.iterations.push(Iteration {
                iteration: 0,
                pass_rate: rate,
                previous_pass_rate: rate,
                failed_tests: self.results.failed(),
                outcome: IterationOutcome::Initial,
                suite_size: self.results.total(),
                selected_tests: Vec::new(),
                tests_duration_s: took.as_secs_f64(),
                full_suite_estimate_s: took.as_secs_f64(),
                note: "the whole suite, before any fix".into(),
                ..Iteration::default()
            });
            self.state.best_pass_rate = rate;
        }
        self.state.next_action = self.after_gate();
        self.save()
    }

    /// What comes after judging the current results.
    fn after_gate(&mut self) -> NextAction {
        let fails = plan::failures(&self.results, self.suite.analysis);
        let all_low = fails.iter().all(|f| f.criticality == Criticality::Low);
        let target = self.ctx.config.pass_rate_target * 100.0;
        match strategy::gate(self.results.pass_rate(), target, all_low) {
            Gate::Success if self.state.iterations.len() == 1 => {
                self.state.status = CycleStatus::NothingToFix;
                NextAction::Complete
            }
            Gate::Success => {
                self.state.status = CycleStatus::Success;
                NextAction::FinalValidation
            }
            Gate::PartialSuccess => {
                self.state.status = CycleStatus::PartialSuccess;
                NextAction::FinalValidation
            }
            Gate::Continue if self.state.fixes().count() as u32 >= self.state.max_iterations => {
                self.state.status = CycleStatus::Failure;
                NextAction::FinalValidation
            }
            Gate::Continue => NextAction::ExecuteFixTask,
        }
    }

    fn iterate(&mut self) -> Result<(), FixError> {
        let n = self.state.iterations.last().map_or(0, |i| i.iteration) + 1;
        let before = self.results.pass_rate();
        let fails = plan::failures(&self.results, self.suite.analysis);
        let signatures: Vec<String> = fails.iter().map(|f| f.signature.clone()).collect();
        let regressed = self
            .state
            .iterations
            .last()
            .is_some_and(|i| i.outcome == IterationOutcome::Regressed);
        let chosen = strategy::select(&Situation {
            next: n,
            pass_rate: before,
            similarity: strategy::similarity(&signatures),
            regressed,
        });
        self.state.selected_strategy = chosen;
        self.state.stuck_tests = strategy::stuck_tests(&self.state.iterations);
        let (per_test, groups) = plan::localise(
            self.suite.analysis,
            &self.results,
            &fails,
            &self.suite.mirror,
            (&self.code, &self.changed),
        );
        let fix_plan = plan::plan(
            n,
            chosen.as_str(),
            &groups,
            &fails,
            &self.state.stuck_tests,
            &self.code,
        );
        self.write_plan(&fix_plan, &fails, &per_test)?;
        let backends: Vec<_> = self
            .ctx
            .agents
            .chain("fixer")
            .into_iter()
            .filter(|b| !b.is_builtin())
            .collect();
        if backends.is_empty() {
            // No LLM: the localisation and the plan are the result; nothing is pretended.
            self.state.status = CycleStatus::NeedsAgent;
            self.state.next_action = NextAction::Complete;
            return self.save();
        }
        let prompt = prompt::build(&PromptInput {
            iteration: n,
            max_iterations: self.state.max_iterations,
            pass_rate: before,
            strategy: chosen,
            failures: &fails,
            plan: &fix_plan,
            stuck: &self.state.stuck_tests,
            history: &self.state.iterations,
            code: &self.code,
        });
        self.progress(
            "fix",
            format!(
                "iteration {n}: {} strategy, {} failing test(s)",
                chosen.as_str(),
                fails.len()
            ),
        );
        let mut it = Iteration {
            iteration: n,
            strategy: chosen,
            previous_pass_rate: before,
            pass_rate: before,
            failed_tests: self.results.failed(),
            suite_size: self.results.total(),
            ..Iteration::default()
        };
        let (backend, notes) = self.ask(&backends, &prompt)?;
        it.backend = backend;
        // What the answer had that was refused stays on record, whatever the outcome.
        let refused = notes.join("; ");
        let modified = match self.wt().changed_files() {
            Ok(m) => m,
            // git refused what the agent wrote (a path it does not take): the change goes.
            Err(e) => {
                self.wt().discard()?;
                it.outcome = IterationOutcome::Rejected;
                it.note = with_refused(format!("git refused the change: {e}"), &refused);
                return self.record(it);
            }
        };
        if modified.is_empty() {
            it.outcome = IterationOutcome::NoChange;
            it.note = if notes.is_empty() {
                "the agent changed nothing".into()
            } else {
                notes.join("; ")
            };
            return self.record(it);
        }
        it.modified_files = modified.clone();
        if let Some(problem) = super::validate::change(
            self.ctx,
            &self.code,
            &self.suite.mirror,
            &modified,
            (self.framework, self.suite.tools),
        )? {
            self.wt().discard()?;
            it.outcome = IterationOutcome::Rejected;
            it.note = with_refused(problem, &refused);
            return self.record(it);
        }
        // Progressive testing: only what the change can affect.
        let sources = |f: &str| std::fs::read_to_string(self.code.join(f)).ok();
        let selection = suite::affected(self.suite.analysis, &self.results, &modified, &sources);
        let (ran, took) = match &selection {
            Some(ids) => {
                self.progress(
                    "progressive",
                    format!(
                        "iteration {n}: running {} of {} tests, those affected by {}",
                        ids.len(),
                        self.results.total(),
                        modified.join(", ")
                    ),
                );
                if ids.is_empty() {
                    (SuiteResults::default(), Duration::ZERO)
                } else {
                    self.suite.run(
                        Some(ids),
                        &format!("iteration-{n}"),
                        self.run_timeout()?,
                        ids,
                    )?
                }
            }
            None => {
                self.progress(
                    "progressive",
                    format!(
                        "iteration {n}: running the whole suite ({} touches what no test could be traced to)",
                        modified.join(", ")
                    ),
                );
                let known: Vec<String> = self.results.tests.keys().cloned().collect();
                self.suite
                    .run(None, &format!("iteration-{n}"), self.run_timeout()?, &known)?
            }
        };
        it.selected_tests = ran.tests.keys().cloned().collect();
        it.tests_duration_s = took.as_secs_f64();
        it.full_suite_estimate_s = self.full_suite_estimate();
        self.state.tests_run += ran.total();
        self.state.tests_full += self.results.total();
        let mut merged = self.results.clone();
        merged.merge(ran);
        let after = merged.pass_rate();
        it.pass_rate = after;
        it.failed_tests = merged.failed();
        let message = super::deliver::commit_subject(n, chosen.as_str(), before, after);
        if after > before {
            let commit = self.wt().commit(&message)?;
            crate::failpoint::hit("fix.committed");
            it.patch = Some(super::deliver::iteration_patch(
                &self.session,
                self.wt(),
                n,
                &commit,
            )?);
            it.commit = Some(commit.clone());
            it.outcome = IterationOutcome::Improved;
            it.note = refused.clone();
            self.state.best_iteration = n;
            self.state.best_pass_rate = after;
            self.state.best_commit = commit;
            self.results = merged;
        } else if strategy::is_regression(before, after) {
            it.commit = Some(self.wt().commit(&message)?);
            crate::failpoint::hit("fix.committed");
            let rollback = self.wt().revert_head(&format!(
                "test-cycle: rollback iteration {n} - regression detected (pass: {after:.1}% < {before:.1}%)"
            ))?;
            it.rollback_commit = Some(rollback);
            it.outcome = IterationOutcome::Regressed;
            it.note = with_refused(
                format!(
                    "the pass rate fell {:.1} points; rolled back to iteration {}",
                    before - after,
                    self.state.best_iteration
                ),
                &refused,
            );
        } else {
            self.wt().discard()?;
            it.outcome = if after < before {
                IterationOutcome::Worse
            } else {
                IterationOutcome::Unchanged
            };
            it.note = with_refused(
                "no better than before: the change was dropped".into(),
                &refused,
            );
        }
        self.record(it)
    }

    /// Asks the chain for a fix and writes its files into the worktree: the first backend whose
    /// answer changes something wins. Returns its name and what was refused on the way.
    fn ask(
        &mut self,
        backends: &[crate::agents::backends::Backend],
        prompt: &str,
    ) -> Result<(Option<String>, Vec<String>), FixError> {
        // The agent works in a copy of the worktree: it reads the project and runs its tests
        // there; what it changes comes back as files, written into the worktree by the rules
        // below (never git's data, never through a link).
        let folder = self.session.join("workspace").join("agent-fixer");
        let mut notes = Vec::new();
        for backend in backends {
            crate::workspace::mirror(&self.code, &folder, &std::collections::BTreeMap::new())
                .map_err(|cause| crate::team::error::RoleError::Mirror {
                    into: folder.clone(),
                    cause,
                })?;
            let input = CallInput {
                workdir: crate::agents::call::WorkDir::CopyOf(&self.code),
                session: &self.session,
                repo: self.ctx.repo,
                role: "fixer",
                task_id: &self.ctx.task.id,
                system: self.ctx.role_body,
                prompt,
                folder: &folder,
                replay: self.ctx.agents.replay.as_deref(),
                time_left: time_left(self.ctx.deadline)?,
            };
            match call(backend, &input) {
                Ok(answer) => {
                    notes.extend(answer.refused.iter().cloned());
                    for f in &answer.files {
                        let written = if self.wt().is_ignored(&f.path) {
                            // git would not commit it: what is tested must be what is delivered.
                            Err(Refused::Ignored(f.path.clone()))
                        } else {
                            write_into(&self.code, &f.path, &f.content)
                        };
                        if let Err(why) = written {
                            notes.push(why.to_string());
                        }
                    }
                    if self.wt().is_dirty()? {
                        return Ok((Some(backend.name.clone()), notes));
                    }
                    notes.push(format!("{}: its answer changed nothing", backend.name));
                }
                Err(e) => notes.push(format!("{}: {e}", backend.name)),
            }
        }
        Ok((None, notes))
    }

    fn full_suite_estimate(&self) -> f64 {
        self.state
            .iterations
            .first()
            .map_or(0.0, |i| i.tests_duration_s)
    }

    fn record(&mut self, it: Iteration) -> Result<(), FixError> {
        self.progress(
            "iteration",
            format!(
                "iteration {} ({}): pass {:.1}% -> {:.1}%: {:?}",
                it.iteration,
                it.strategy.as_str(),
                it.previous_pass_rate,
                it.pass_rate,
                it.outcome
            ),
        );
        self.state.iterations.push(it);
        self.state.stuck_tests = strategy::stuck_tests(&self.state.iterations);
        self.state.next_action = self.after_gate();
        self.save()
    }

    fn write_plan(
        &self,
        fix_plan: &FixPlan,
        fails: &[Failure],
        per_test: &[crate::artifacts::TestLocalisation],
    ) -> Result<(), FixError> {
        let process = self.session.join(".process");
        let analysis = self.session.join("analysis");
        mkdirs(&process)?;
        mkdirs(&analysis)?;
        let md = plan::markdown(fix_plan, fails, per_test, "");
        // Test output keeps the colours it printed for a terminal: not in a file people read.
        let md = crate::util::strip_ansi(&md);
        atomic_write(
            &process.join(format!("iteration-{}-analysis.md", fix_plan.iteration)),
            md.as_bytes(),
        )?;
        atomic_write(&analysis.join("fault-localisation.md"), md.as_bytes())?;
        atomic_write_json(
            &self.session.join(crate::artifacts::FIX_PLAN_FILE),
            fix_plan,
        )?;
        atomic_write_json(
            &self.session.join(crate::artifacts::LOCALISATION_FILE),
            &crate::artifacts::LocalisationRecord {
                tests: per_test.to_vec(),
            },
        )?;
        Ok(())
    }

    /// The whole suite once more, at the final commit: the figures the gate's verdict stands on.
    fn final_validation(&mut self) -> Result<(), FixError> {
        self.progress(
            "progressive",
            format!(
                "final validation: running the whole suite ({} tests)",
                self.results.total()
            ),
        );
        self.wt().discard()?;
        let known: Vec<String> = self.results.tests.keys().cloned().collect();
        let (results, took) = self.suite.run(None, "final", self.run_timeout()?, &known)?;
        self.state.final_validation = Some(FullRun {
            total: results.total(),
            passed: results.passed(),
            pass_rate: results.pass_rate(),
            failed_tests: results.failed(),
            duration_s: took.as_secs_f64(),
        });
        self.results = results;
        self.pinned_tests()?;
        // The full run has the last word: an estimate the whole suite does not confirm is no success.
        if self.state.status != CycleStatus::Failure {
            let fails = plan::failures(&self.results, self.suite.analysis);
            let all_low = fails.iter().all(|f| f.criticality == Criticality::Low);
            let target = self.ctx.config.pass_rate_target * 100.0;
            self.state.status = match strategy::gate(self.results.pass_rate(), target, all_low) {
                Gate::Success => CycleStatus::Success,
                Gate::PartialSuccess => CycleStatus::PartialSuccess,
                Gate::Continue => CycleStatus::Failure,
            };
        }
        self.state.next_action = NextAction::Complete;
        self.save()
    }
}

impl Loop<'_> {
    /// The session's generated tests that fail against the fixed code (the defect tests are in
    /// the suite): they pinned the old behaviour, so applying them with the fixes would fail.
    fn pinned_tests(&mut self) -> Result<(), FixError> {
        let changed = self
            .state
            .fixes()
            .any(|i| i.outcome == IterationOutcome::Improved);
        if self.session_tests.is_empty() || !changed {
            return Ok(());
        }
        let files = self.session_tests.clone();
        let (ran, _) = self
            .suite
            .run(Some(&files), "session-tests", self.run_timeout()?, &[])?;
        self.state.pinned_tests = ran
            .failed()
            .into_iter()
            .filter(|t| !self.suite.carried_ids.contains(t))
            .collect();
        Ok(())
    }
}

/// Why an answer's file was not written into the worktree.
#[derive(Debug, thiserror::Error)]
enum Refused {
    #[error("{}: not a path inside the repository (refused)", .0.display())]
    Outside(PathBuf),
    #[error("{}: goes through a symlink (refused)", .0.display())]
    Symlink(PathBuf),
    #[error("{}: a file git ignores (refused)", .0.display())]
    Ignored(PathBuf),
    #[error("{}: {cause}", path.display())]
    Write {
        path: PathBuf,
        cause: std::io::Error,
    },
}

/// Writes an answer's file into the worktree: a relative path inside it, never into git's data
/// or through a symlink.
fn write_into(root: &Path, rel: &Path, content: &str) -> Result<(), Refused> {
    // Git's data (in any case, as a case-insensitive filesystem sees it), our sessions, and the
    // files that tell git to run programs or fetch anything (attributes, submodules).
    let forbidden = |p: &std::ffi::OsStr| {
        let p = p.to_string_lossy().to_ascii_lowercase();
        let p = p.trim_end_matches(['.', ' ']);
        matches!(
            p,
            ".git" | "git~1" | ".workflow" | ".gitattributes" | ".gitmodules"
        )
    };
    let safe = rel
        .components()
        .all(|c| matches!(c, std::path::Component::Normal(p) if !forbidden(p)));
    if !safe || rel.as_os_str().is_empty() {
        return Err(Refused::Outside(rel.to_path_buf()));
    }
    let mut at = root.to_path_buf();
    for part in rel.parent().into_iter().flat_map(|p| p.components()) {
        at.push(part);
        if std::fs::symlink_metadata(&at).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(Refused::Symlink(rel.to_path_buf()));
        }
    }
    if let Some(parent) = root.join(rel).parent() {
        std::fs::create_dir_all(parent).map_err(|cause| Refused::Write {
            path: rel.to_path_buf(),
            cause,
        })?;
    }
    crate::util::write_nofollow(&root.join(rel), content.as_bytes()).map_err(|cause| {
        Refused::Write {
            path: rel.to_path_buf(),
            cause,
        }
    })
}

/// `note`, then what the answer had that was refused.
fn with_refused(note: String, refused: &str) -> String {
    if refused.is_empty() {
        note
    } else {
        format!("{note}; refused: {refused}")
    }
}

/// One sentence for the outcome and the summary.
fn summary(state: &IterationState) -> String {
    let first = state.iterations.first().map_or(0.0, |i| i.pass_rate);
    let last = state
        .final_validation
        .as_ref()
        .map_or(state.best_pass_rate, |f| f.pass_rate);
    let fixes = state.fixes().count();
    match state.status {
        CycleStatus::NothingToFix => format!("nothing to fix: the suite passes ({first:.1}%)"),
        CycleStatus::NeedsAgent => format!(
            "fixing needs an agent backend: the built-in one has no LLM. It wrote the fault localisation and a fix plan ({} failing tests, pass rate {first:.1}%); run again with --backend fixer=<agent>",
            state.iterations.first().map_or(0, |i| i.failed_tests.len())
        ),
        status => {
            let commits = state.fixes().filter(|i| i.outcome == IterationOutcome::Improved).count();
            let rolled = state.fixes().filter(|i| i.outcome == IterationOutcome::Regressed).count();
            let saved = if state.tests_full > 0 {
                format!(
                    "; progressive testing ran {} of {} tests ({:.0}% saved)",
                    state.tests_run,
                    state.tests_full,
                    100.0 - state.tests_run as f64 * 100.0 / state.tests_full as f64
                )
            } else {
                String::new()
            };
            let pinned = if state.pinned_tests.is_empty() {
                String::new()
            } else {
                format!(
                    "; {} generated test(s) of the session asserted the old behaviour and fail now",
                    state.pinned_tests.len()
                )
            };
            format!(
                "{}: pass rate {first:.1}% -> {last:.1}% in {fixes} iteration(s), {commits} committed, {rolled} rolled back{saved}{pinned}",
                status.as_str().replace('_', " ")
            )
        }
    }
}
