//! The file side of dynamic roles: `roles add` requests from the session's inbox (read, checked,
//! installed, answered) and the role templates handleAdapt instantiates. What to do is the
//! scheduler's; reading and writing the files is done here, and every step is persisted before
//! anything it enables is dispatched.

use std::time::Duration;

use actix::prelude::*;
use notify::{RecursiveMode, Watcher};

use super::Coordinator;
use crate::agents::backends::BackendConfig;
use crate::bus::message::CapabilityGap;
use crate::error::Error;
use crate::roles::RoleSpec;
use crate::sched::{Adapt, AddedBy, Effect, RolePlan, TemplateRequest};
use crate::session::dynamic;
use crate::session::inbox::{self, Reply, RoleRequest};
use crate::tasks::Task;
use crate::util::now_ts;

/// A file landed in the inbox.
#[derive(actix::Message)]
#[rtype(result = "()")]
pub struct InboxPoke;

impl Handler<InboxPoke> for Coordinator {
    type Result = ();

    fn handle(&mut self, _: InboxPoke, ctx: &mut Self::Context) {
        if self.sched.is_finished() {
            return;
        }
        if self.handle_inbox(ctx) {
            self.run_beat(ctx);
        }
    }
}

impl Coordinator {
    /// The named backends (presets and the repository's team-testing.toml), read afresh: a
    /// role file may name them in `agent:`.
    fn backends(&self) -> BackendConfig {
        BackendConfig::load(None, &self.env.repo).unwrap_or_default()
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
    pub(super) fn handle_inbox(&mut self, ctx: &mut Context<Self>) -> bool {
        let root = self.env.session.root.clone();
        let mut changed = false;
        for request in inbox::pending(&root) {
            let backends = self.backends();
            let reply = match self.add_requested_role(&request, &backends) {
                Ok((effects, spec, task)) => {
                    changed = true;
                    // The role and its task are durable before the user is told so.
                    if !self.execute(effects, ctx) {
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
                    let refused = self.sched.role_refused(&e);
                    self.execute(vec![refused], ctx);
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

    /// `roles add`: the role file read and checked, its task planned, the file installed in the
    /// session, then the role and its task added. On error nothing is changed or copied.
    fn add_requested_role(
        &mut self,
        request: &RoleRequest,
        backends: &BackendConfig,
    ) -> Result<(Vec<Effect>, RoleSpec, Task), Error> {
        let max = request.max_roles.unwrap_or_else(|| self.sched.max_roles());
        let (spec, text) = dynamic::read_role(&request.spec)?;
        dynamic::check_spec(self.sched.registry(), self.sched.graph(), &spec, |b| {
            backends.backends.contains_key(b)
        })?;
        let plan = self.sched.plan_role(
            &spec,
            request.after.as_deref(),
            &request.before,
            max,
            "added with roles add",
            &now_ts(),
        )?;
        let task = plan.task().clone();
        let installed = dynamic::install_role(&self.env.session, &request.spec, &spec, &text)?;
        let by = AddedBy::RolesAdd {
            max_roles: request.max_roles,
        };
        let effects = self.sched.add_role(plan, installed.clone(), by, backends)?;
        Ok((effects, installed, task))
    }

    /// handleAdapt for a worker's capability gap; a template it picks is instantiated here.
    pub(super) fn capability_gap(&mut self, gap: CapabilityGap, ctx: &mut Context<Self>) {
        let backends = self.backends();
        let effects = match self.sched.capability_gap(gap, &backends, &now_ts()) {
            Adapt::Decided(effects) => effects,
            Adapt::Instantiate(request) => {
                let instantiated = self.instantiate(&request);
                self.sched
                    .template_instantiated(request, instantiated, &backends)
            }
        };
        self.execute(effects, ctx);
    }

    /// The template's role checked against the session, its task planned, then its files
    /// written into role-specs/ and read back.
    fn instantiate(&self, request: &TemplateRequest) -> Result<(RolePlan, RoleSpec), Error> {
        let session = &self.env.session;
        let spec = dynamic::template_spec(session, request.template)?;
        dynamic::check_spec(self.sched.registry(), self.sched.graph(), &spec, |_| false)?;
        let plan = self.sched.plan_role(
            &spec,
            None,
            &request.before,
            request.max_roles,
            &request.reason,
            &now_ts(),
        )?;
        let installed = dynamic::install_template(session, request.template)?;
        Ok((plan, installed))
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
