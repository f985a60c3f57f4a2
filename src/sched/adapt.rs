//! handleAdapt and dynamic roles: a worker's capability gap is redirected to a role that covers
//! it, given to a registered role without a task, met by a role template, or — at the role cap —
//! pauses the session. A role joins in two steps around its files: [`Scheduler::plan_role`]
//! checks the cap and the wiring, the caller installs the role's files, then
//! [`Scheduler::add_role`] registers it and inserts its task.

use crate::agents::backends::BackendConfig;
use crate::bus::message::{CapabilityGap, ErrorReport, Payload, RoleAdded};
use crate::error::Error;
use crate::roles::RoleSpec;
use crate::session::dynamic::rules;
use crate::tasks::{Task, TaskGraph, TaskStatus};

use super::effect::publish;
use super::{Effect, Save, Scheduler, COORDINATOR};

/// What handleAdapt made of a capability gap.
#[derive(Debug)]
pub enum Adapt {
    /// Decided and said: redirected, a registered role given a task, paused at the role cap,
    /// or not covered.
    Decided(Vec<Effect>),
    /// A role template covers the gap and the cap leaves room: instantiate it, then report
    /// with [`Scheduler::template_instantiated`].
    Instantiate(TemplateRequest),
}

/// What was done for a gap (the effects, and the answer's text), or why nothing could be.
type Resolution = Result<(Vec<Effect>, String), Error>;

/// A template to instantiate for a gap, with everything its task needs.
#[derive(Debug, Clone)]
pub struct TemplateRequest {
    pub gap: CapabilityGap,
    pub template: &'static str,
    /// Why the role joins, kept in its task.
    pub reason: String,
    pub max_roles: usize,
    /// The tasks that wait on the role's task: the analyst's, so the report sees its results.
    pub before: Vec<String>,
}

/// A role's task, checked against the cap and wired into a copy of the graph; nothing changes
/// until [`Scheduler::add_role`] applies it, before anything else changes the graph.
#[derive(Debug)]
pub struct RolePlan {
    task: Task,
    next: TaskGraph,
}

impl RolePlan {
    pub fn task(&self) -> &Task {
        &self.task
    }
}

/// Who asked for a role, as the role_added message says it.
#[derive(Debug, Clone, PartialEq)]
pub enum AddedBy {
    /// `roles add`; its `--max-roles`, when given, stays the session's cap.
    RolesAdd {
        max_roles: Option<usize>,
    },
    CapabilityGap,
    Template(&'static str),
}

impl AddedBy {
    fn label(&self) -> String {
        match self {
            AddedBy::RolesAdd { .. } => "roles add".into(),
            AddedBy::CapabilityGap => "capability gap".into(),
            AddedBy::Template(name) => format!("template {name}"),
        }
    }
}

impl Scheduler {
    /// The capability gaps the session paused on: handled again when it resumes.
    pub fn take_pending_gaps(&mut self) -> Vec<CapabilityGap> {
        std::mem::take(&mut self.state.pending_gaps)
    }

    /// handleAdapt: redirect the gap to a role that covers it, else give a registered role a
    /// task or create a role from a template while the cap allows, else pause and say why.
    /// `backends` resolves the agent chain of a role whose file names agents.
    pub fn capability_gap(
        &mut self,
        gap: CapabilityGap,
        backends: &BackendConfig,
        now: &str,
    ) -> Adapt {
        // A gap handled again on resume: its old pause warning is stale.
        let paused_on = format!("paused on the capability gap '{}'", gap.gap);
        self.state.warnings.retain(|w| !w.starts_with(&paused_on));
        let suggested = gap.suggested_capability.as_deref();
        let covering = rules::covering_role(&self.registry, suggested, &gap.gap).cloned();
        let resolution = match covering {
            Some(role) if self.graph.tasks.iter().any(|t| t.owner == role.name) => {
                let tasks: Vec<String> = self
                    .graph
                    .tasks
                    .iter()
                    .filter(|t| t.owner == role.name)
                    .map(|t| t.id.clone())
                    .collect();
                Ok((
                    Vec::new(),
                    format!("redirected to role {} ({})", role.name, tasks.join(", ")),
                ))
            }
            Some(role) => self.task_for_registered(&role, &gap, backends, now),
            None => match rules::template_for(suggested, &gap.gap) {
                Some(template) => {
                    let max_roles = self.max_roles();
                    match rules::check_cap(&self.graph, template, max_roles) {
                        Ok(()) => {
                            return Adapt::Instantiate(TemplateRequest {
                                reason: gap_reason(&gap),
                                before: self.pending_report_tasks(),
                                gap,
                                template,
                                max_roles,
                            })
                        }
                        Err(e) => Err(e),
                    }
                }
                None => Err(Error::Usage(
                    "no role or template covers it (templates: lint, mutation, security-scan)"
                        .into(),
                )),
            },
        };
        Adapt::Decided(self.resolve_gap(gap, resolution))
    }

    /// The template of `request` was instantiated (its role planned, its files installed and
    /// read back), or could not be.
    pub fn template_instantiated(
        &mut self,
        request: TemplateRequest,
        instantiated: Result<(RolePlan, RoleSpec), Error>,
        backends: &BackendConfig,
    ) -> Vec<Effect> {
        let template = request.template;
        let resolution = instantiated.and_then(|(plan, spec)| {
            let text = format!(
                "role {} created from template {template}: {}",
                spec.name, plan.task.id
            );
            let added = self.add_role(plan, spec, AddedBy::Template(template), backends)?;
            Ok((added, text))
        });
        self.resolve_gap(request.gap, resolution)
    }

    /// A role registered (roles-dir, role-specs) but without a task yet gets one.
    fn task_for_registered(
        &mut self,
        role: &RoleSpec,
        gap: &CapabilityGap,
        backends: &BackendConfig,
        now: &str,
    ) -> Resolution {
        rules::check_cap(&self.graph, &role.name, self.max_roles())?;
        if role.prefix.is_none() {
            return Err(Error::Usage(format!(
                "role {} covers it but has no prefix for a task",
                role.name
            )));
        }
        let before = self.pending_report_tasks();
        let task = rules::role_task(
            &self.graph,
            role,
            None,
            &self.session_root,
            &gap_reason(gap),
            now,
        );
        let registry = &self.registry;
        rules::insert_role_task(&mut self.graph, task.clone(), None, &before, |r| {
            registry.contains(r)
        })?;
        let added = self.role_added(role, &task, &AddedBy::CapabilityGap, backends);
        Ok((
            vec![added],
            format!("role {} given task {}", role.name, task.id),
        ))
    }

    /// Says how the gap was resolved, to the worker that asked. At the role cap the session
    /// pauses: the gap is kept and handled again on resume.
    fn resolve_gap(&mut self, gap: CapabilityGap, resolution: Resolution) -> Vec<Effect> {
        let mut effects = Vec::new();
        let text = match resolution {
            Ok((added, text)) => {
                effects.extend(added);
                text
            }
            Err(cap @ Error::RoleCap { .. }) => {
                let reason = format!("paused on the capability gap '{}': {cap}", gap.gap);
                self.state.warnings.push(reason.clone());
                self.state.pending_gaps.push(gap.clone());
                self.pausing = Some(reason);
                format!("paused: {cap}")
            }
            Err(e) => {
                let warning = format!("capability gap '{}' not covered: {e}", gap.gap);
                self.state.warnings.push(warning);
                format!("not covered: {e}")
            }
        };
        let to = gap.requested_by.clone();
        effects.push(publish(
            &to,
            format!("[coordinator] capability gap from {to}: {text}"),
            Payload::CapabilityGap(CapabilityGap {
                resolution: Some(text),
                ..gap
            }),
        ));
        effects
    }

    /// Checks that `spec`'s role fits under `max_roles` and that its task wires in (`after`:
    /// it waits on that task and takes over its waiters; `before`: those wait on it).
    pub fn plan_role(
        &self,
        spec: &RoleSpec,
        after: Option<&str>,
        before: &[String],
        max_roles: usize,
        reason: &str,
        now: &str,
    ) -> Result<RolePlan, Error> {
        rules::check_cap(&self.graph, &spec.name, max_roles)?;
        let task = rules::role_task(&self.graph, spec, after, &self.session_root, reason, now);
        let mut next = self.graph.clone();
        rules::insert_role_task(&mut next, task.clone(), after, before, |r| {
            self.registry.contains(r) || r == spec.name
        })?;
        Ok(RolePlan { task, next })
    }

    /// Registers the role (`spec` as installed in the session) and applies its plan. A role
    /// added by `roles add` is saved at once: the user is told only once it is durable.
    pub fn add_role(
        &mut self,
        plan: RolePlan,
        spec: RoleSpec,
        by: AddedBy,
        backends: &BackendConfig,
    ) -> Result<Vec<Effect>, Error> {
        self.registry.insert(spec.clone())?;
        self.graph = plan.next;
        let mut effects = Vec::new();
        if let AddedBy::RolesAdd {
            max_roles: Some(max),
        } = by
        {
            self.state.controls.max_roles = Some(max);
        }
        effects.push(self.role_added(&spec, &plan.task, &by, backends));
        if matches!(by, AddedBy::RolesAdd { .. }) {
            effects.push(Effect::Persist(Save::Beat));
        }
        Ok(effects)
    }

    /// A `roles add` request was refused: the log says why (the requester gets the reply).
    pub fn role_refused(&self, error: &Error) -> Effect {
        publish(
            COORDINATOR,
            format!("[coordinator] roles add refused: {error}"),
            Payload::Error(ErrorReport {
                task_id: None,
                message: format!("roles add refused: {error}"),
                retry: false,
            }),
        )
    }

    /// The role in session.json's roles and agent chains, and the role_added message.
    fn role_added(
        &mut self,
        spec: &RoleSpec,
        task: &Task,
        by: &AddedBy,
        backends: &BackendConfig,
    ) -> Effect {
        if !self.state.roles.contains(&spec.name) {
            self.state.roles.push(spec.name.clone());
        }
        if let Some(names) = &spec.agent {
            let mut names = names.clone();
            if !names.iter().any(|n| n == "builtin") {
                names.push("builtin".into());
            }
            if let Ok(chain) = backends.chain_for(&spec.name, &Default::default(), Some(&names)) {
                self.state.agents.chains.insert(spec.name.clone(), chain);
            }
        }
        publish(
            "all",
            format!(
                "[coordinator] role {} added ({}): {} {}",
                spec.name,
                by.label(),
                task.id,
                if task.blocked_by.is_empty() {
                    "ready".to_string()
                } else {
                    format!("after {}", task.blocked_by.join(", "))
                }
            ),
            Payload::RoleAdded(RoleAdded {
                role: spec.name.clone(),
                prefix: spec.prefix.clone(),
                task_id: Some(task.id.clone()),
                source: spec.source_label(),
            }),
        )
    }

    /// The analyst's pending tasks: a role added for a gap runs before them.
    fn pending_report_tasks(&self) -> Vec<String> {
        self.graph
            .tasks
            .iter()
            .filter(|t| t.owner == "analyst" && t.status == TaskStatus::Pending)
            .map(|t| t.id.clone())
            .collect()
    }
}

fn gap_reason(gap: &CapabilityGap) -> String {
    format!("capability gap from {}: {}", gap.requested_by, gap.gap)
}
