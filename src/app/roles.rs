//! `roles add`: a role added to a session. With no coordinator running, this process makes the
//! change as the coordinator would; with one running, the request goes to its inbox and the
//! answer comes back from it.

use std::path::PathBuf;
use std::time::Duration;

use crate::agents::backends::BackendConfig;
use crate::bus::message::RoleAdded;
use crate::bus::{Message, Payload};
use crate::error::{Error, Result};
use crate::roles::{RoleSource, RoleSpec};
use crate::session::dynamic;
use crate::session::inbox::{self, Reply, RoleRequest};
use crate::session::{SessionDir, SessionLock, SessionStatus};
use crate::util::now_ts;

/// What `roles add` was asked.
#[derive(Debug, Clone)]
pub struct AddRole {
    /// The role's name, which the file must define.
    pub name: String,
    pub spec: PathBuf,
    pub after: Option<String>,
    pub before: Vec<String>,
    pub max_roles: Option<usize>,
    /// How long to wait for a running coordinator's answer.
    pub wait: Duration,
}

/// How the role was added.
pub enum Added {
    /// By this process (no coordinator ran): the task waits for the next `resume`.
    Offline {
        role: String,
        task_id: String,
        /// "now", or "after TASK, …".
        after: String,
    },
    /// By the running coordinator, which said so.
    Live { message: String },
}

/// Adds the role to `session`, offline or through its running coordinator.
pub fn add(session: &SessionDir, ask: &AddRole) -> Result<Added> {
    let spec_path = ask
        .spec
        .canonicalize()
        .map_err(|e| Error::io(format!("role file {}", ask.spec.display()), e))?;
    // The file's own errors come first and name it, whoever applies the request.
    let text = std::fs::read_to_string(&spec_path)
        .map_err(|e| Error::io(format!("reading {}", spec_path.display()), e))?;
    let spec = RoleSpec::parse(&text, &spec_path, RoleSource::Session(spec_path.clone()))?;
    if spec.name != ask.name {
        return Err(Error::bad_file(
            &spec_path,
            format!("it defines role {}, not {}", spec.name, ask.name),
        ));
    }
    let request = RoleRequest {
        id: inbox::new_id(),
        spec: spec_path,
        after: ask.after.clone(),
        before: ask.before.clone(),
        max_roles: ask.max_roles,
    };
    match SessionLock::acquire(&session.lock_file(), &session.id) {
        Ok(lock) => add_offline(session, &request, lock),
        Err(Error::Locked { pid, .. }) => {
            inbox::post(&session.root, &request)?;
            let places = [session.root.clone()];
            let lock_file = session.lock_file();
            let gone = || SessionLock::holder(&lock_file).is_none();
            if let Some(reply) = inbox::wait_reply(&places, &request.id, ask.wait, gone) {
                return answer(reply);
            }
            if !inbox::withdraw(&session.root, &request.id) {
                // The coordinator has taken it: its answer comes once it is applied.
                let long = Duration::from_secs(600);
                return match inbox::wait_reply(&places, &request.id, long, gone) {
                    Some(reply) => answer(reply),
                    None => Err(Error::Session(format!(
                        "the coordinator of {} took the request but ended without answering; \
                         {} shows whether the role was added",
                        session.id,
                        crate::hint::quoted(session, "roles list", &[])
                    ))),
                };
            }
            // Withdrawn, so nobody applied it: apply it here if the coordinator has ended.
            match SessionLock::acquire(&session.lock_file(), &session.id) {
                Ok(lock) => add_offline(session, &request, lock),
                Err(_) => Err(Error::Session(format!(
                    "the coordinator of {} (pid {pid}) did not take the request within {} s; nothing was added",
                    session.id,
                    ask.wait.as_secs()
                ))),
            }
        }
        Err(e) => Err(e),
    }
}

fn answer(reply: Reply) -> Result<Added> {
    if reply.ok {
        Ok(Added::Live {
            message: reply.message,
        })
    } else {
        Err(Error::Session(format!(
            "roles add refused: {}",
            reply.message
        )))
    }
}

/// No coordinator runs: this process holds the lock and makes the change itself, as the
/// coordinator would (the next `resume` dispatches the task).
fn add_offline(session: &SessionDir, request: &RoleRequest, _lock: SessionLock) -> Result<Added> {
    let mut state = session.load_state()?;
    let (config, mut registry) = super::team::session_team(session, &state)?;
    let mut graph = session.load_tasks()?;
    let max = request
        .max_roles
        .or(state.controls.max_roles)
        .unwrap_or(config.max_roles);
    let known: Vec<String> = BackendConfig::load(None, &state.repo)?
        .backends
        .into_keys()
        .collect();
    let (spec, task) = dynamic::add_role(
        session,
        &mut registry,
        &mut graph,
        request,
        max,
        |b| known.iter().any(|k| k == b),
        &now_ts(),
    )?;
    if request.max_roles.is_some() {
        state.controls.max_roles = Some(max);
    }
    if !state.roles.contains(&spec.name) {
        state.roles.push(spec.name.clone());
    }
    if let Some(names) = &spec.agent {
        let mut names = names.clone();
        if !names.iter().any(|n| n == "builtin") {
            names.push("builtin".into());
        }
        let chain = BackendConfig::load(None, &state.repo)?.chain_for(
            &spec.name,
            &Default::default(),
            Some(&names),
        )?;
        state.agents.chains.insert(spec.name.clone(), chain);
    }
    // A completed or archived session has work again (a failed one stays failed: resume
    // retries it).
    if matches!(
        state.status,
        SessionStatus::Completed | SessionStatus::Archived
    ) {
        state.status = SessionStatus::Paused;
    }
    state.tasks_total = graph.len();
    state.updated_at = now_ts();
    super::complete::log_message(
        session,
        Message::new(
            "coordinator",
            "all",
            format!(
                "[coordinator] role {} added (roles add): {}",
                spec.name, task.id
            ),
            Payload::RoleAdded(RoleAdded {
                role: spec.name.clone(),
                prefix: spec.prefix.clone(),
                task_id: Some(task.id.clone()),
                source: spec.source_label(),
            }),
        ),
    )?;
    session.save_tasks(&graph)?;
    session.save_state(&state)?;
    Ok(Added::Offline {
        role: spec.name,
        after: if task.blocked_by.is_empty() {
            "now".to_string()
        } else {
            format!("after {}", task.blocked_by.join(", "))
        },
        task_id: task.id,
    })
}
