//! The coordinator's dynamic roles: `roles add` requests from the session's inbox, handleAdapt
//! for a worker's `capability_gap`, and pausing when the role cap leaves no room. Every step is a
//! message on the bus and is persisted before anything it enables is dispatched.

use std::collections::BTreeSet;
use std::time::Duration;

use actix::prelude::*;
use notify::{RecursiveMode, Watcher};
use serde_json::json;

use super::{Coordinator, RunEnd, ME};
use crate::bus::message::{CapabilityGap, ErrorReport, RoleAdded, Shutdown};
use crate::bus::Payload;
use crate::error::{Error, EXIT_PAUSED};
use crate::pipeline::dynamic;
use crate::roles::RoleSpec;
use crate::session::inbox::{self, Reply};
use crate::session::SessionStatus;
use crate::tasks::Task;
use crate::util::now_ts;

/// A file landed in the inbox.
#[derive(actix::Message)]
#[rtype(result = "()")]
pub struct InboxPoke;

impl Handler<InboxPoke> for Coordinator {
    type Result = ();

    fn handle(&mut self, _: InboxPoke, ctx: &mut Self::Context) {
        if self.finished {
            return;
        }
        if self.handle_inbox() {
            self.handle_spawn_next(ctx);
        }
    }
}

impl Coordinator {
    fn max_roles(&self) -> usize {
        self.state
            .controls
            .max_roles
            .unwrap_or(self.env.config.max_roles)
    }

    /// Backend names a role file may put in `agent:`: the presets and the repository's config.
    fn known_backends(&self) -> BTreeSet<String> {
        crate::agents::backends::BackendConfig::load(None, &self.env.repo)
            .unwrap_or_default()
            .backends
            .into_keys()
            .collect()
    }

    /// Watches `<session>/.inbox/`; without a watcher (inotify exhausted) it looks once a second.
    pub(super) fn watch_inbox(&mut self, ctx: &mut Context<Self>) {
        let dir = inbox::dir(&self.env.session.root);
        let _ = std::fs::create_dir_all(&dir);
        let addr = ctx.address();
        let watcher = notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
            // Not on reads: reading the inbox would poke it again, without end.
            if res.is_ok_and(|e| !e.kind.is_access()) {
                addr.do_send(InboxPoke);
            }
        })
        .and_then(|mut w| w.watch(&dir, RecursiveMode::NonRecursive).map(|_| w));
        match watcher {
            Ok(w) => self.inbox_watcher = Some(w),
            Err(e) => {
                tracing::warn!(
                    "no watcher on {}: {e}; checking it every second",
                    dir.display()
                );
                ctx.run_interval(Duration::from_secs(1), |_, ctx| {
                    ctx.address().do_send(InboxPoke)
                });
            }
        }
    }

    /// Answers every waiting `roles add` request. Returns true when the graph changed.
    pub(super) fn handle_inbox(&mut self) -> bool {
        let root = self.env.session.root.clone();
        let mut changed = false;
        for request in inbox::pending(&root) {
            let max = request.max_roles.unwrap_or_else(|| self.max_roles());
            let known = self.known_backends();
            let result = dynamic::add_role(
                &self.env.session,
                &mut self.registry,
                &mut self.graph,
                &request,
                max,
                |b| known.contains(b),
                &now_ts(),
            );
            let reply = match result {
                Ok((spec, task)) => {
                    if request.max_roles.is_some() {
                        self.state.controls.max_roles = Some(max);
                    }
                    self.role_added(&spec, &task, "roles add");
                    changed = true;
                    // The role and its task are durable before the user is told so.
                    if !self.persist() {
                        return false;
                    }
                    Reply {
                        id: request.id.clone(),
                        ok: true,
                        message: format!(
                            "role {} added: {} will run {}",
                            spec.name,
                            task.id,
                            wiring(&task, &request.before)
                        ),
                        task_id: Some(task.id.clone()),
                    }
                }
                Err(e) => {
                    self.say(
                        ME,
                        format!("[coordinator] roles add refused: {e}"),
                        Payload::Error(ErrorReport {
                            task_id: None,
                            message: format!("roles add refused: {e}"),
                            retry: false,
                        }),
                    );
                    Reply {
                        id: request.id.clone(),
                        ok: false,
                        message: e.to_string(),
                        task_id: None,
                    }
                }
            };
            if let Err(e) = inbox::answer(&root, &reply) {
                tracing::warn!("{e}");
            }
        }
        changed
    }

    /// The role_added message, and the role in session.json's roles and agent chains.
    fn role_added(&mut self, spec: &RoleSpec, task: &Task, source: &str) {
        if !self.state.roles.contains(&spec.name) {
            self.state.roles.push(spec.name.clone());
        }
        if let Some(names) = &spec.agent {
            let config = crate::agents::backends::BackendConfig::load(None, &self.env.repo)
                .unwrap_or_default();
            let mut names = names.clone();
            if !names.iter().any(|n| n == "builtin") {
                names.push("builtin".into());
            }
            if let Ok(chain) = config.chain_for(&spec.name, &Default::default(), Some(&names)) {
                self.state.agents.chains.insert(spec.name.clone(), chain);
            }
        }
        self.say(
            "all",
            format!(
                "[coordinator] role {} added ({source}): {} {}",
                spec.name,
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
        );
    }

    /// handleAdapt: redirect the gap to a role that covers it, else create a role from a template
    /// while the cap allows, else pause the session and say why.
    pub(super) fn handle_adapt(&mut self, gap: CapabilityGap) {
        // A gap handled again on resume: its old pause warning is stale.
        let paused_on = format!("paused on the capability gap '{}'", gap.gap);
        self.state.warnings.retain(|w| !w.starts_with(&paused_on));
        let suggested = gap.suggested_capability.as_deref();
        let covering = dynamic::covering_role(&self.registry, suggested, &gap.gap).cloned();
        let resolution: Result<String, Error> = match covering {
            Some(role) if self.graph.tasks.iter().any(|t| t.owner == role.name) => {
                let tasks: Vec<String> = self
                    .graph
                    .tasks
                    .iter()
                    .filter(|t| t.owner == role.name)
                    .map(|t| t.id.clone())
                    .collect();
                Ok(format!(
                    "redirected to role {} ({})",
                    role.name,
                    tasks.join(", ")
                ))
            }
            Some(role) => self.task_for_registered(&role, &gap),
            None => match dynamic::template_for(suggested, &gap.gap) {
                Some(template) => {
                    let reason = format!("capability gap from {}: {}", gap.requested_by, gap.gap);
                    let max = self.max_roles();
                    dynamic::add_template(
                        &self.env.session,
                        &mut self.registry,
                        &mut self.graph,
                        template,
                        &reason,
                        max,
                        &now_ts(),
                    )
                    .map(|(spec, task)| {
                        self.role_added(&spec, &task, &format!("template {template}"));
                        format!(
                            "role {} created from template {template}: {}",
                            spec.name, task.id
                        )
                    })
                }
                None => Err(Error::Usage(
                    "no role or template covers it (templates: lint, mutation, security-scan)"
                        .into(),
                )),
            },
        };
        let text = match resolution {
            Ok(text) => text,
            Err(Error::RoleCap { role, in_use, max }) => {
                let why = Error::RoleCap { role, in_use, max }.to_string();
                let reason = format!("paused on the capability gap '{}': {why}", gap.gap);
                self.state.warnings.push(reason.clone());
                self.state.pending_gaps.push(gap.clone());
                self.pausing = Some(reason);
                format!("paused: {why}")
            }
            Err(e) => {
                let warning = format!("capability gap '{}' not covered: {e}", gap.gap);
                self.state.warnings.push(warning);
                format!("not covered: {e}")
            }
        };
        let to = gap.requested_by.clone();
        self.say(
            &to,
            format!("[coordinator] capability gap from {to}: {text}"),
            Payload::CapabilityGap(CapabilityGap {
                resolution: Some(text),
                ..gap
            }),
        );
    }

    /// A role registered (roles-dir, role-specs) but without a task yet gets one.
    fn task_for_registered(
        &mut self,
        role: &RoleSpec,
        gap: &CapabilityGap,
    ) -> Result<String, Error> {
        dynamic::check_cap(&self.graph, &role.name, self.max_roles())?;
        if role.prefix.is_none() {
            return Err(Error::Usage(format!(
                "role {} covers it but has no prefix for a task",
                role.name
            )));
        }
        let before: Vec<String> = self
            .graph
            .tasks
            .iter()
            .filter(|t| t.owner == "analyst" && t.status == crate::tasks::TaskStatus::Pending)
            .map(|t| t.id.clone())
            .collect();
        let reason = format!("capability gap from {}: {}", gap.requested_by, gap.gap);
        let task = dynamic::role_task(
            &self.graph,
            role,
            None,
            &self.env.session.root,
            &reason,
            &now_ts(),
        );
        let registry = &self.registry;
        dynamic::insert_role_task(&mut self.graph, task.clone(), None, &before, |r| {
            registry.contains(r)
        })?;
        self.role_added(role, &task, "capability gap");
        Ok(format!("role {} given task {}", role.name, task.id))
    }

    /// Ends the run paused (the role cap): resumable once the user raises --max-roles.
    pub(super) fn end_paused(&mut self, reason: &str) {
        self.finished = true;
        self.state.status = SessionStatus::Paused;
        let mut data = serde_json::Map::new();
        data.insert("status".into(), json!("paused"));
        data.insert("warnings".into(), json!(self.state.warnings));
        self.say(
            ME,
            "[coordinator] pipeline paused",
            Payload::StateUpdate(data),
        );
        self.say(
            "all",
            format!("[coordinator] pipeline paused: {reason}"),
            Payload::Shutdown(Shutdown {
                status: "paused".into(),
                reason: reason.to_string(),
            }),
        );
        if !self.persist_whole() {
            return;
        }
        self.workers.clear();
        // One role more than the cap is what a capability gap asks for.
        let raised = (self.max_roles() + 1).to_string();
        if let Ok(mut end) = self.end.lock() {
            *end = Some(RunEnd {
                status: SessionStatus::Paused,
                exit_code: EXIT_PAUSED,
                warnings: vec![format!(
                    "{reason}; {} continues it",
                    crate::hint::quoted(&self.env.session, "resume", &["--max-roles", &raised])
                )],
            });
        }
        System::current().stop();
    }
}

fn wiring(task: &Task, before: &[String]) -> String {
    let after = if task.blocked_by.is_empty() {
        "now".to_string()
    } else {
        format!("after {}", task.blocked_by.join(", "))
    };
    if before.is_empty() {
        after
    } else {
        format!("{after}, before {}", before.join(", "))
    }
}
