//! The beat's rules, driven event by event with no actor system: each test feeds outcomes and
//! beats to a scheduler over a built-in pipeline and checks the effects it returns.

use std::path::{Path, PathBuf};

use super::*;
use crate::agents::backends::BackendConfig;
use crate::bus::message::{CapabilityGap, Message};
use crate::error::EXIT_PIPELINE_FAILED;
use crate::pipeline::select::build_tasks;
use crate::roles::{RoleSource, RoleSpec};
use crate::session::dynamic::TEMPLATE_FILES;
use crate::tasks::{Outcome, TaskStatus};

fn state() -> SessionState {
    serde_json::from_value(json!({
        "session_id": "S", "status": "active", "task_description": "t",
        "pipeline_mode": "standard", "team_name": "x", "repo": "/r",
        "completion_action": "keep", "created_at": "c", "updated_at": "u"
    }))
    .unwrap()
}

fn scheduler_from(mode: &str, state: SessionState, registry: Registry) -> Scheduler {
    let config = TeamConfig::builtin().unwrap();
    let tasks = build_tasks(&config, mode, "S", "x", |_| "r".into(), "t").unwrap();
    Scheduler::new(
        config,
        PathBuf::from("S"),
        registry,
        TaskGraph::new(tasks),
        state,
    )
}

fn scheduler_with(mode: &str, state: SessionState) -> Scheduler {
    scheduler_from(mode, state, Registry::load(None).unwrap())
}

fn scheduler(mode: &str) -> Scheduler {
    scheduler_with(mode, state())
}

fn published(effects: &[Effect]) -> Vec<&Message> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Publish(m) => Some(m.as_ref()),
            _ => None,
        })
        .collect()
}

fn of_kind<'a>(effects: &'a [Effect], kind: &str) -> Vec<&'a Message> {
    published(effects)
        .into_iter()
        .filter(|m| m.kind() == kind)
        .collect()
}

/// (instance, task, where) of every task the effects start.
fn starts(effects: &[Effect]) -> Vec<(String, String, StartOn)> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Start(s) => Some((s.instance.clone(), s.task.id.clone(), s.on)),
            _ => None,
        })
        .collect()
}

fn started_ids(effects: &[Effect]) -> Vec<String> {
    starts(effects).into_iter().map(|(_, id, _)| id).collect()
}

fn status(s: &Scheduler, id: &str) -> TaskStatus {
    s.graph().get(id).unwrap().status
}

/// A layer's run with this pass rate and coverage.
fn run(pass_rate: f64, coverage: Option<f64>) -> Outcome {
    Outcome {
        pass_rate: Some(pass_rate),
        coverage,
        ..Outcome::completed("ran")
    }
}

/// What each built-in task reports when all goes well (a run meets every gate).
fn success(id: &str) -> Outcome {
    if id.starts_with("TESTRUN") {
        run(1.0, Some(95.0))
    } else {
        Outcome::completed("done")
    }
}

/// Reports `outcome` for `id` from the worker it was handed to.
fn report(s: &mut Scheduler, id: &str, outcome: Outcome) -> Vec<Effect> {
    let worker = s.graph().get(id).unwrap().worker.clone().unwrap();
    s.task_reported(&worker, id, outcome, "t")
}

/// Beats and completes tasks in order, each with [`success`]; each must start at its beat.
fn complete(s: &mut Scheduler, ids: &[&str]) {
    for id in ids {
        let beat = s.beat("t");
        if status(s, id) != TaskStatus::InProgress {
            panic!("{id} did not start: {:?}", started_ids(&beat));
        }
        report(s, id, success(id));
    }
}

#[test]
fn a_run_below_its_gate_opens_a_gc_round_and_rewires_what_waited_on_it() {
    let mut s = scheduler("standard");
    complete(&mut s, &["STRATEGY-001", "TESTGEN-001"]);
    assert_eq!(started_ids(&s.beat("t")), ["TESTRUN-001"]);
    let effects = report(&mut s, "TESTRUN-001", run(1.0, Some(50.0)));

    let gate = of_kind(&effects, "quality_gate");
    assert_eq!(
        gate[0].summary,
        "[coordinator] L1 below gate after TESTRUN-001: coverage 50.0% < 80%"
    );
    let trigger = of_kind(&effects, "gc_loop_trigger");
    assert_eq!(
        trigger[0].summary,
        "[coordinator] GC round 1/3 for L1: TESTGEN-L1-fix-1, TESTRUN-L1-fix-1"
    );
    assert!(matches!(effects.last(), Some(Effect::QueueBeat)));
    assert_eq!(s.state().gc_rounds.get("L1"), Some(&1));
    let blocked_by = |id: &str| s.graph().get(id).unwrap().blocked_by.clone();
    assert_eq!(blocked_by("TESTGEN-L1-fix-1"), ["TESTRUN-001"]);
    assert_eq!(blocked_by("TESTRUN-L1-fix-1"), ["TESTGEN-L1-fix-1"]);
    // The next layer now waits on the round's run, not on the run below the gate.
    assert_eq!(blocked_by("TESTGEN-002"), ["TESTRUN-L1-fix-1"]);
    assert_eq!(started_ids(&s.beat("t")), ["TESTGEN-L1-fix-1"]);
}

#[test]
fn after_the_last_round_the_layer_is_accepted_below_its_gate_with_a_warning() {
    let mut s = scheduler("standard");
    complete(&mut s, &["STRATEGY-001", "TESTGEN-001"]);
    // Each round gains a little pass rate: the loop runs to its last round.
    let low = |round: u32| run(0.5 + 0.05 * f64::from(round), None);
    s.beat("t");
    report(&mut s, "TESTRUN-001", low(0));
    for round in 1..=3 {
        complete(&mut s, &[&format!("TESTGEN-L1-fix-{round}")]);
        s.beat("t");
        let effects = report(&mut s, &format!("TESTRUN-L1-fix-{round}"), low(round));
        let opened = of_kind(&effects, "gc_loop_trigger");
        assert_eq!(opened.len(), usize::from(round < 3), "round {round}");
    }
    let warning = "L1-unit still below its gate: pass rate 65.0% < 95.0% after 3 GC rounds";
    assert_eq!(s.state().warnings, [warning]);
    assert!(s.graph().get("TESTGEN-L1-fix-4").is_none());
    assert_eq!(started_ids(&s.beat("t")), ["TESTGEN-002"]);
}

#[test]
fn a_round_that_gains_too_little_ends_the_loop_against_the_run_before_it() {
    let mut s = scheduler("standard");
    complete(&mut s, &["STRATEGY-001", "TESTGEN-001"]);
    s.beat("t");
    report(&mut s, "TESTRUN-001", run(1.0, Some(50.0)));
    complete(&mut s, &["TESTGEN-L1-fix-1"]);
    s.beat("t");
    let effects = report(&mut s, "TESTRUN-L1-fix-1", run(1.0, Some(50.5)));
    assert!(of_kind(&effects, "gc_loop_trigger").is_empty());
    let warning = "L1-unit below its gate, GC loop stopped: coverage 50.5% < 80%; plateau: +0.5 \
                   points of line coverage in round 1";
    assert_eq!(s.state().warnings, [warning]);
    assert_eq!(started_ids(&s.beat("t")), ["TESTGEN-002"]);
}

#[test]
fn a_gate_met_goes_on_and_unknown_coverage_is_judged_on_pass_rate_with_a_warning() {
    let mut s = scheduler("standard");
    complete(&mut s, &["STRATEGY-001", "TESTGEN-001"]);
    s.beat("t");
    let effects = report(&mut s, "TESTRUN-001", run(0.96, None));
    let gate = of_kind(&effects, "quality_gate");
    assert_eq!(
        gate[0].summary,
        "[coordinator] L1 gate met after TESTRUN-001"
    );
    let Payload::QualityGate(g) = &gate[0].payload else {
        unreachable!()
    };
    assert_eq!(g.verdict, "pass");
    assert!(g.warning.as_deref().unwrap().contains("coverage unknown"));
    assert!(of_kind(&effects, "gc_loop_trigger").is_empty());
}

#[test]
fn a_failed_task_is_retried_once_then_fails_and_its_successors_are_skipped() {
    let mut s = scheduler("targeted");
    assert_eq!(started_ids(&s.beat("t")), ["STRATEGY-001"]);
    let effects = report(&mut s, "STRATEGY-001", Outcome::failed("boom"));
    let error = of_kind(&effects, "error");
    assert_eq!(
        error[0].summary,
        "[coordinator] STRATEGY-001 failed, retrying: boom"
    );
    // The strategist's worker has nothing left to do: it goes, and a new one retries.
    assert!(effects
        .iter()
        .any(|e| matches!(e, Effect::Release { instance } if instance == "strategist")));
    let retry = s.beat("t");
    assert_eq!(
        starts(&retry),
        [(
            "strategist".into(),
            "STRATEGY-001".into(),
            StartOn::NewWorker
        )]
    );
    let effects = report(&mut s, "STRATEGY-001", Outcome::failed("boom"));
    assert_eq!(
        of_kind(&effects, "error")[0].summary,
        "[coordinator] STRATEGY-001 failed: boom"
    );
    let end = s.beat("t");
    let skipped: Vec<&str> = of_kind(&end, "error")
        .iter()
        .map(|m| m.summary.as_str())
        .collect();
    assert_eq!(
        skipped,
        [
            "[coordinator] TESTGEN-001 skipped: dependency STRATEGY-001 failed",
            "[coordinator] TESTRUN-001 skipped: dependency TESTGEN-001 skipped",
        ]
    );
    assert_eq!(
        of_kind(&end, "shutdown")[0].summary,
        "[coordinator] pipeline failed: failed: STRATEGY-001"
    );
    assert!(matches!(
        end.last(),
        Some(Effect::End(Ending::Settled {
            status: SessionStatus::Failed,
            exit_code: EXIT_PIPELINE_FAILED,
            ..
        }))
    ));
}

#[test]
fn a_run_without_a_pass_rate_is_a_failure() {
    let mut s = scheduler("targeted");
    complete(&mut s, &["STRATEGY-001", "TESTGEN-001"]);
    s.beat("t");
    let effects = report(&mut s, "TESTRUN-001", Outcome::completed("no numbers"));
    assert_eq!(
        of_kind(&effects, "error")[0].summary,
        "[coordinator] TESTRUN-001 failed, retrying: the executor reported no pass_rate"
    );
    assert!(of_kind(&effects, "quality_gate").is_empty());
}

#[test]
fn a_not_applicable_generator_takes_its_layers_run_along_and_opens_no_round() {
    let mut s = scheduler("standard");
    complete(&mut s, &["STRATEGY-001"]);
    s.beat("t");
    let effects = report(
        &mut s,
        "TESTGEN-001",
        Outcome::not_applicable("no generator for go"),
    );
    assert_eq!(
        published(&effects)[0].summary,
        "[coordinator] L1-unit not applicable (TESTGEN-001, TESTRUN-001): no generator for go"
    );
    assert_eq!(status(&s, "TESTRUN-001"), TaskStatus::NotApplicable);
    assert!(of_kind(&effects, "quality_gate").is_empty());
    assert!(s.graph().gc_rounds().is_empty());
    assert_eq!(started_ids(&s.beat("t")), ["TESTGEN-002"]);
}

#[test]
fn the_concurrency_cap_limits_the_tasks_started_at_a_beat() {
    let mut free = scheduler("comprehensive");
    complete(&mut free, &["STRATEGY-001"]);
    assert_eq!(
        starts(&free.beat("t")),
        [
            (
                "generator-1".into(),
                "TESTGEN-001".into(),
                StartOn::NewWorker
            ),
            (
                "generator-2".into(),
                "TESTGEN-002".into(),
                StartOn::NewWorker
            ),
        ]
    );

    let mut one = state();
    one.controls.concurrency = Some(1);
    let mut s = scheduler_with("comprehensive", one);
    complete(&mut s, &["STRATEGY-001"]);
    assert_eq!(started_ids(&s.beat("t")), ["TESTGEN-001"]);
    // A beat with the cap reached starts nothing, and still saves what changed.
    let full = s.beat("t");
    assert!(starts(&full).is_empty());
    assert!(matches!(full[..], [Effect::Persist(Save::Beat)]));
    report(&mut s, "TESTGEN-001", success("TESTGEN-001"));
    // TESTGEN-002 and TESTRUN-001 are both ready: the first created goes.
    assert_eq!(started_ids(&s.beat("t")), ["TESTGEN-002"]);
}

#[test]
fn an_inner_loop_task_is_handed_to_its_running_worker() {
    let mut s = scheduler("standard");
    complete(&mut s, &["STRATEGY-001", "TESTGEN-001", "TESTRUN-001"]);
    // The generator's worker stayed (inner loop), the strategist's went.
    let effects = s.beat("t");
    assert_eq!(
        starts(&effects),
        [(
            "generator".into(),
            "TESTGEN-002".into(),
            StartOn::RunningWorker
        )]
    );
    let unblocked = of_kind(&effects, "task_unblocked");
    assert_eq!(
        unblocked[0].summary,
        "[coordinator] TESTGEN-002 -> generator (handed to its running inner-loop worker)"
    );
    assert_eq!(unblocked[0].to, "generator");
    // The claims are saved before the task starts.
    let persist = effects
        .iter()
        .position(|e| matches!(e, Effect::Persist(Save::Beat)));
    let start = effects.iter().position(|e| matches!(e, Effect::Start(_)));
    assert!(persist < start);
}

#[test]
fn a_finished_run_is_completed_with_exit_code_0_and_says_how_many_tasks_completed() {
    let mut s = scheduler("standard");
    complete(
        &mut s,
        &[
            "STRATEGY-001",
            "TESTGEN-001",
            "TESTRUN-001",
            "TESTGEN-002",
            "TESTRUN-002",
            "TESTANA-001",
        ],
    );
    let end = s.beat("t");
    let kinds: Vec<&str> = published(&end).iter().map(|m| m.kind()).collect();
    assert_eq!(kinds, ["state_update", "shutdown"]);
    assert_eq!(
        of_kind(&end, "shutdown")[0].summary,
        "[coordinator] pipeline completed: 6/6 tasks completed"
    );
    assert!(matches!(end[2], Effect::Persist(Save::Whole)));
    assert!(matches!(
        &end[3],
        Effect::End(Ending::Settled { status: SessionStatus::Completed, exit_code: 0, warnings })
            if warnings.is_empty()
    ));
    assert!(s.is_finished());
    assert!(s.beat("t").is_empty());
}

#[test]
fn a_kept_run_ends_paused_and_counts_what_was_not_applicable() {
    let mut keep = state();
    keep.completion_action = crate::session::CompletionAction::AutoKeep;
    let mut s = scheduler_with("targeted", keep);
    complete(&mut s, &["STRATEGY-001"]);
    s.beat("t");
    report(&mut s, "TESTGEN-001", Outcome::not_applicable("nothing"));
    let end = s.beat("t");
    assert_eq!(
        of_kind(&end, "shutdown")[0].summary,
        "[coordinator] pipeline paused: 1/3 tasks completed, 2 not applicable"
    );
    assert!(matches!(
        end.last(),
        Some(Effect::End(Ending::Settled {
            status: SessionStatus::Paused,
            exit_code: 0,
            ..
        }))
    ));
}

#[test]
fn only_the_worker_a_task_was_handed_to_may_report_it() {
    let mut s = scheduler("targeted");
    s.beat("t");
    let effects = s.task_reported("executor", "STRATEGY-001", Outcome::completed("x"), "t");
    assert_eq!(
        published(&effects)[0].summary,
        "[coordinator] ignored: executor reported STRATEGY-001, which is not its task"
    );
    assert_eq!(effects.len(), 1, "no beat for an ignored report");
    assert_eq!(status(&s, "STRATEGY-001"), TaskStatus::InProgress);
}

#[test]
fn a_worker_that_stops_holding_a_task_fails_that_attempt() {
    let mut s = scheduler("targeted");
    s.beat("t");
    let effects = s.worker_stopped("strategist", "t");
    assert_eq!(
        published(&effects)[0].summary,
        "[coordinator] STRATEGY-001: worker strategist (strategist) stopped before finishing"
    );
    assert_eq!(status(&s, "STRATEGY-001"), TaskStatus::Pending);
    assert!(s.worker_stopped("strategist", "t").is_empty());
}

#[test]
fn a_resume_takes_recorded_outcomes_and_requeues_the_rest() {
    let mut s = scheduler("comprehensive");
    complete(&mut s, &["STRATEGY-001"]);
    s.beat("t");
    assert_eq!(
        s.stranded(),
        [
            ("TESTGEN-001".to_string(), 1),
            ("TESTGEN-002".to_string(), 1)
        ]
    );
    let effects = s.resume(
        vec![
            Stranded {
                task_id: "TESTGEN-001".into(),
                recorded: Some(Outcome::completed("done")),
            },
            Stranded {
                task_id: "TESTGEN-002".into(),
                recorded: None,
            },
        ],
        "t",
    );
    let summaries: Vec<&str> = published(&effects)
        .iter()
        .map(|m| m.summary.as_str())
        .collect();
    assert_eq!(
        summaries,
        [
            "[coordinator] session resumed",
            "[coordinator] TESTGEN-001 finished before the interruption: completed: done",
            "[coordinator] TESTGEN-002 was interrupted; back to pending",
        ]
    );
    assert_eq!(status(&s, "TESTGEN-001"), TaskStatus::Completed);
    let t = s.graph().get("TESTGEN-002").unwrap();
    assert_eq!((t.status, t.attempts), (TaskStatus::Pending, 0));
}

fn lint_gap() -> CapabilityGap {
    CapabilityGap {
        gap: "no static analysis of the changed files".into(),
        requested_by: "executor".into(),
        suggested_capability: Some("lint".into()),
        resolution: None,
    }
}

fn resolution(effects: &[Effect]) -> String {
    let gap = of_kind(effects, "capability_gap");
    match &gap.last().unwrap().payload {
        Payload::CapabilityGap(g) => g.resolution.clone().unwrap(),
        _ => unreachable!(),
    }
}

#[test]
fn a_gap_at_the_role_cap_pauses_once_the_running_tasks_are_done() {
    let mut s = scheduler("standard");
    s.beat("t");
    let Adapt::Decided(effects) = s.capability_gap(lint_gap(), &BackendConfig::default(), "t")
    else {
        panic!("the cap leaves no room for a template")
    };
    assert!(resolution(&effects).starts_with("paused: "));
    assert_eq!(s.state().pending_gaps, [lint_gap()]);
    assert!(s.state().warnings[0].starts_with("paused on the capability gap"));
    // STRATEGY-001 still runs: nothing new starts, the session waits for it.
    assert!(matches!(s.beat("t")[..], [Effect::Persist(Save::Beat)]));
    report(&mut s, "STRATEGY-001", success("STRATEGY-001"));
    let end = s.beat("t");
    assert!(starts(&end).is_empty());
    assert!(matches!(
        end.last(),
        Some(Effect::End(Ending::PausedAtRoleCap { raise_to: 6, .. }))
    ));
    assert_eq!(s.state().status, SessionStatus::Paused);
}

/// The lint template's role as a session would install it.
fn lint_template() -> RoleSpec {
    let (_, files) = TEMPLATE_FILES.iter().find(|(n, _)| *n == "lint").unwrap();
    let path = Path::new("S/role-specs/lint/role.md");
    RoleSpec::parse(files[0].1, path, RoleSource::Session(path.into())).unwrap()
}

#[test]
fn a_gap_under_a_raised_cap_adds_a_role_from_its_template_before_the_report() {
    let mut six = state();
    six.controls.max_roles = Some(6);
    let mut s = scheduler_with("standard", six);
    let backends = BackendConfig::default();
    let Adapt::Instantiate(request) = s.capability_gap(lint_gap(), &backends, "t") else {
        panic!("a template covers the gap")
    };
    assert_eq!(
        (request.template, request.before.clone()),
        ("lint", vec!["TESTANA-001".to_string()])
    );
    let plan = s
        .plan_role(
            &lint_template(),
            None,
            &request.before,
            request.max_roles,
            &request.reason,
            "t",
        )
        .unwrap();
    // Planned, not applied: the graph waits for the role's files.
    assert!(s.graph().get("LINT-001").is_none());
    let effects = s.template_instantiated(request, Ok((plan, lint_template())), &backends);
    assert_eq!(
        resolution(&effects),
        "role lint created from template lint: LINT-001"
    );
    assert_eq!(of_kind(&effects, "role_added").len(), 1);
    assert!(s.registry().contains("lint"));
    assert!(s.state().roles.contains(&"lint".to_string()));
    let analyst = &s.graph().get("TESTANA-001").unwrap().blocked_by;
    assert_eq!(analyst, &["TESTRUN-002", "LINT-001"]);
    let first = s.beat("t");
    assert_eq!(started_ids(&first), ["STRATEGY-001", "LINT-001"]);
    // A role that joined mid-session runs on the session's agent chain for it; the roles it
    // started with run on their own backend.
    let chains: Vec<usize> = first
        .iter()
        .filter_map(|e| match e {
            Effect::Start(start) => Some(start.chain.len()),
            _ => None,
        })
        .collect();
    assert_eq!(chains, [0, 1]);
}

#[test]
fn a_gap_covered_by_a_registered_role_without_a_task_gives_it_one() {
    let mut registry = Registry::load(None).unwrap();
    registry.insert(lint_template()).unwrap();
    let mut six = state();
    six.controls.max_roles = Some(6);
    let mut s = scheduler_from("standard", six, registry);
    let Adapt::Decided(effects) = s.capability_gap(lint_gap(), &BackendConfig::default(), "t")
    else {
        panic!("a registered role covers it")
    };
    assert_eq!(resolution(&effects), "role lint given task LINT-001");
    assert_eq!(
        of_kind(&effects, "role_added")[0].summary,
        "[coordinator] role lint added (capability gap): LINT-001 ready"
    );
    assert_eq!(
        s.graph().get("TESTANA-001").unwrap().blocked_by,
        ["TESTRUN-002", "LINT-001"]
    );
}

#[test]
fn a_gap_covered_by_a_role_with_tasks_is_redirected() {
    let mut s = scheduler("standard");
    let gap = CapabilityGap {
        suggested_capability: Some("analyst".into()),
        ..lint_gap()
    };
    let Adapt::Decided(effects) = s.capability_gap(gap, &BackendConfig::default(), "t") else {
        panic!("a role covers it")
    };
    assert_eq!(
        resolution(&effects),
        "redirected to role analyst (TESTANA-001)"
    );
    assert!(s.state().warnings.is_empty());
}

#[test]
fn a_remote_claim_names_the_host_only_for_the_attempt_the_task_is_on() {
    let mut s = scheduler("standard");
    complete(&mut s, &["STRATEGY-001"]);
    s.beat("t");
    assert_eq!(status(&s, "TESTGEN-001"), TaskStatus::InProgress);
    let attempt = s.graph().get("TESTGEN-001").unwrap().attempts;
    // A stale worker's claim of an earlier attempt changes nothing.
    assert!(s
        .remote_claim("TESTGEN-001", attempt + 1, "host-x", "host-x-1")
        .is_empty());
    assert!(s
        .graph()
        .get("TESTGEN-001")
        .unwrap()
        .meta
        .get("host")
        .is_none());
    let effects = s.remote_claim("TESTGEN-001", attempt, "host-a", "host-a-42-abc");
    assert!(matches!(effects.as_slice(), [Effect::QueueBeat]));
    let meta = &s.graph().get("TESTGEN-001").unwrap().meta;
    assert_eq!(meta["host"], "host-a");
    assert_eq!(meta["remote_worker"], "host-a-42-abc");
    // A task not in progress takes no claim.
    assert!(s
        .remote_claim("TESTANA-001", 0, "host-a", "host-a-42-abc")
        .is_empty());
}
