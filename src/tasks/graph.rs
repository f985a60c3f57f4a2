use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use super::sched::Sched;
use super::{Outcome, Task, TaskStatus};

/// A violation of the graph's rules; each names the task.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GraphError {
    #[error("task {0} is defined twice")]
    Duplicate(String),
    #[error("task {task} is owned by unknown role '{owner}'")]
    UnknownOwner { task: String, owner: String },
    #[error("task {task} is blocked by '{missing}', which does not exist")]
    Dangling { task: String, missing: String },
    #[error("task {task} is part of a dependency cycle ({cycle})")]
    Cycle { task: String, cycle: String },
    #[error("task {0} does not exist")]
    Unknown(String),
    #[error("task {task} cannot be claimed: it is {status}")]
    NotClaimable { task: String, status: &'static str },
}

impl GraphError {
    pub fn task(&self) -> &str {
        match self {
            GraphError::Duplicate(t) | GraphError::Unknown(t) => t,
            GraphError::UnknownOwner { task, .. }
            | GraphError::Dangling { task, .. }
            | GraphError::Cycle { task, .. }
            | GraphError::NotClaimable { task, .. } => task,
        }
    }
}

/// Every task of a session in creation order. Serialized as tasks.json.
///
/// Status changes go through the methods (claim, complete, fail_attempt, propagate_skips, insert,
/// get_mut), which keep the scheduling index current and note which tasks changed (the
/// coordinator journals just those). Code that edits `tasks` directly calls [`TaskGraph::reindex`]
/// afterwards.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct TaskGraph {
    #[serde(default = "format_version")]
    pub version: u32,
    /// The last coordinator beat this snapshot includes (see `session::journal`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub beat: u64,
    pub tasks: Vec<Task>,
    #[serde(skip)]
    index: HashMap<String, usize>,
    #[serde(skip)]
    sched: Sched,
    /// A task was handed out by `get_mut`: the index is rebuilt before it is used again.
    #[serde(skip)]
    stale: bool,
    #[serde(skip)]
    changed: Changed,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// What changed since the coordinator last saved the graph.
#[derive(Debug, Clone, Default)]
pub enum Changed {
    /// Unknown (a fresh or reindexed graph): save it whole.
    #[default]
    All,
    /// These tasks, by position, in creation order.
    Some(std::collections::BTreeSet<usize>),
}

fn format_version() -> u32 {
    1
}

impl TaskGraph {
    pub fn new(tasks: Vec<Task>) -> Self {
        let mut graph = TaskGraph {
            version: format_version(),
            tasks,
            ..TaskGraph::default()
        };
        graph.reindex();
        graph
    }

    /// Rebuilds the id and scheduling indexes; call after deserializing or after editing `tasks`
    /// directly. Everything counts as changed.
    pub fn reindex(&mut self) {
        self.index = self
            .tasks
            .iter()
            .enumerate()
            .map(|(i, t)| (t.id.clone(), i))
            .collect();
        self.sched = Sched::build(&self.tasks, &self.index);
        self.stale = false;
        self.changed = Changed::All;
    }

    /// Rebuilds the scheduling index if a task was edited through `get_mut` since.
    fn refresh(&mut self) {
        if self.stale {
            self.sched = Sched::build(&self.tasks, &self.index);
            self.stale = false;
        }
    }

    fn note_changed(&mut self, i: usize) {
        if let Changed::Some(set) = &mut self.changed {
            set.insert(i);
        }
    }

    /// Sets task `i`'s status, keeping the index current.
    fn set_status(&mut self, i: usize, status: TaskStatus) {
        self.refresh();
        let old = std::mem::replace(&mut self.tasks[i].status, status);
        self.sched.moved(&self.tasks, i, old);
        self.note_changed(i);
    }

    /// The tasks changed since the last call (or `Changed::All`), and starts counting afresh.
    pub fn take_changed(&mut self) -> Changed {
        std::mem::replace(&mut self.changed, Changed::Some(Default::default()))
    }

    pub fn get(&self, id: &str) -> Option<&Task> {
        self.index.get(id).map(|&i| &self.tasks[i])
    }

    /// A task to edit in place: it counts as changed, and the scheduling index is rebuilt
    /// before its next use (an edit may touch status or blockedBy).
    pub fn get_mut(&mut self, id: &str) -> Option<&mut Task> {
        let i = *self.index.get(id)?;
        self.stale = true;
        self.note_changed(i);
        Some(&mut self.tasks[i])
    }

    /// Adds a task read back from the journal, or replaces the one with its id.
    pub fn upsert(&mut self, task: Task) {
        match self.index.get(&task.id) {
            Some(&i) => self.tasks[i] = task,
            None => {
                self.index.insert(task.id.clone(), self.tasks.len());
                self.tasks.push(task);
            }
        }
        self.stale = true;
    }

    pub fn len(&self) -> usize {
        self.tasks.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tasks.is_empty()
    }

    /// Checks every rule: unique ids, known owners, existing blockedBy, no cycles.
    pub fn validate(&self, role_exists: impl Fn(&str) -> bool) -> Result<(), GraphError> {
        let mut seen = HashSet::new();
        for t in &self.tasks {
            if !seen.insert(t.id.as_str()) {
                return Err(GraphError::Duplicate(t.id.clone()));
            }
        }
        for t in &self.tasks {
            if !role_exists(&t.owner) {
                return Err(GraphError::UnknownOwner {
                    task: t.id.clone(),
                    owner: t.owner.clone(),
                });
            }
            if let Some(missing) = t.blocked_by.iter().find(|b| !self.index.contains_key(*b)) {
                return Err(GraphError::Dangling {
                    task: t.id.clone(),
                    missing: missing.clone(),
                });
            }
        }
        self.topo_order().map(|_| ())
    }

    /// Kahn's algorithm; a cycle is reported with the tasks left in it.
    pub fn topo_order(&self) -> Result<Vec<&str>, GraphError> {
        let mut indegree: HashMap<&str, usize> = HashMap::new();
        let mut successors: HashMap<&str, Vec<&str>> = HashMap::new();
        for t in &self.tasks {
            indegree.entry(&t.id).or_insert(0);
            for b in &t.blocked_by {
                *indegree.entry(&t.id).or_insert(0) += 1;
                successors.entry(b).or_default().push(&t.id);
            }
        }
        let mut queue: Vec<&str> = self
            .tasks
            .iter()
            .filter(|t| indegree[t.id.as_str()] == 0)
            .map(|t| t.id.as_str())
            .collect();
        let mut order = Vec::with_capacity(self.tasks.len());
        while let Some(id) = queue.pop() {
            order.push(id);
            for s in successors.get(id).into_iter().flatten() {
                let d = indegree.get_mut(s).expect("indexed");
                *d -= 1;
                if *d == 0 {
                    queue.push(s);
                }
            }
        }
        if order.len() < self.tasks.len() {
            let left: Vec<&str> = self
                .tasks
                .iter()
                .filter(|t| indegree[t.id.as_str()] > 0)
                .map(|t| t.id.as_str())
                .collect();
            return Err(GraphError::Cycle {
                task: left[0].to_string(),
                cycle: left.join(", "),
            });
        }
        Ok(order)
    }

    fn position(&self, id: &str) -> Result<usize, GraphError> {
        self.index
            .get(id)
            .copied()
            .ok_or_else(|| GraphError::Unknown(id.to_string()))
    }

    fn is_ready(&self, i: usize) -> bool {
        if !self.stale {
            return self.sched.ready.contains(&i);
        }
        let t = &self.tasks[i];
        t.status == TaskStatus::Pending
            && t.blocked_by
                .iter()
                .all(|b| self.get(b).is_some_and(|d| d.status.is_done()))
    }

    /// Pending tasks whose blockedBy are all completed (or deleted), in creation order.
    pub fn ready(&self) -> Vec<&Task> {
        self.ready_ids(usize::MAX)
            .into_iter()
            .map(|i| &self.tasks[i])
            .collect()
    }

    /// The first `limit` ready tasks' positions, in creation order: what a beat dispatches.
    fn ready_ids(&self, limit: usize) -> Vec<usize> {
        if self.stale {
            (0..self.tasks.len())
                .filter(|&i| self.is_ready(i))
                .take(limit)
                .collect()
        } else {
            self.sched.ready.iter().copied().take(limit).collect()
        }
    }

    /// The ids of the first `limit` ready tasks, in creation order.
    pub fn next_ready(&mut self, limit: usize) -> Vec<String> {
        self.refresh();
        self.ready_ids(limit)
            .into_iter()
            .map(|i| self.tasks[i].id.clone())
            .collect()
    }

    pub fn in_progress(&self) -> Box<dyn Iterator<Item = &Task> + '_> {
        if self.stale {
            Box::new(
                self.tasks
                    .iter()
                    .filter(|t| t.status == TaskStatus::InProgress),
            )
        } else {
            Box::new(self.sched.running.iter().map(|&i| &self.tasks[i]))
        }
    }

    pub fn in_progress_count(&self) -> usize {
        if self.stale {
            self.in_progress().count()
        } else {
            self.sched.running.len()
        }
    }

    /// pending -> in_progress, recorded before the worker starts.
    pub fn claim(&mut self, id: &str, worker: &str, now: &str) -> Result<(), GraphError> {
        let i = self.position(id)?;
        self.refresh();
        if !self.is_ready(i) {
            return Err(GraphError::NotClaimable {
                task: id.to_string(),
                status: self.tasks[i].status.as_str(),
            });
        }
        self.set_status(i, TaskStatus::InProgress);
        let task = &mut self.tasks[i];
        task.worker = Some(worker.to_string());
        task.claimed_at = Some(now.to_string());
        task.attempts += 1;
        Ok(())
    }

    pub fn complete(&mut self, id: &str, outcome: Outcome, now: &str) -> Result<(), GraphError> {
        let i = self.position(id)?;
        self.set_status(i, TaskStatus::Completed);
        let task = &mut self.tasks[i];
        task.started_at = outcome.started_at.clone().or(task.started_at.take());
        task.completed_at = Some(
            outcome
                .finished_at
                .clone()
                .unwrap_or_else(|| now.to_string()),
        );
        task.artifacts = outcome.artifacts.clone();
        task.reason = None;
        task.outcome = Some(outcome);
        Ok(())
    }

    /// The task had nothing to do: it is not applicable, and so is every pending task of its
    /// layer owned by one of `owners` (the layer's generator and critic) that waits on it: they
    /// would have nothing to work on. Other roles' tasks (an added lint) just go on. Returns the
    /// ids of those it marked too.
    pub fn not_applicable(
        &mut self,
        id: &str,
        outcome: Outcome,
        owners: &[&str],
        now: &str,
    ) -> Result<Vec<String>, GraphError> {
        let i = self.position(id)?;
        let reason = outcome.summary.clone();
        let layer = self.tasks[i].layer.clone();
        self.set_status(i, TaskStatus::NotApplicable);
        let task = &mut self.tasks[i];
        task.completed_at = Some(now.to_string());
        task.reason = Some(reason.clone());
        task.outcome = Some(outcome);
        let mut marked = Vec::new();
        let mut from = vec![id.to_string()];
        while let Some(done) = from.pop() {
            let next: Vec<usize> = (0..self.tasks.len())
                .filter(|&j| {
                    let t = &self.tasks[j];
                    t.status == TaskStatus::Pending
                        && owners.contains(&t.owner.as_str())
                        && layer.is_some()
                        && t.layer == layer
                        && t.blocked_by.contains(&done)
                })
                .collect();
            for j in next {
                self.set_status(j, TaskStatus::NotApplicable);
                let t = &mut self.tasks[j];
                t.completed_at = Some(now.to_string());
                t.reason = Some(reason.clone());
                marked.push(t.id.clone());
                from.push(t.id.clone());
            }
        }
        Ok(marked)
    }

    /// A failed attempt: back to pending while attempts remain, else failed. Returns true when the
    /// task will be retried.
    pub fn fail_attempt(
        &mut self,
        id: &str,
        reason: &str,
        max_attempts: u32,
        outcome: Option<Outcome>,
        now: &str,
    ) -> Result<bool, GraphError> {
        let i = self.position(id)?;
        let retry = self.tasks[i].attempts < max_attempts;
        self.set_status(
            i,
            if retry {
                TaskStatus::Pending
            } else {
                TaskStatus::Failed
            },
        );
        let task = &mut self.tasks[i];
        task.reason = Some(reason.to_string());
        task.outcome = outcome;
        if retry {
            task.claimed_at = None;
            task.worker = None;
        } else {
            task.completed_at = Some(now.to_string());
        }
        Ok(retry)
    }

    /// Skips every pending task that waits on a failed or skipped one, transitively, and says which
    /// dependency. Returns (task, reason) for each newly skipped task.
    pub fn propagate_skips(&mut self) -> Vec<(String, String)> {
        self.refresh();
        let mut skipped = Vec::new();
        // Only the successors of tasks that died since the last call are looked at.
        while let Some(d) = self.sched.dead.pop_front() {
            for k in 0..self.sched.successors[d].len() {
                let s = self.sched.successors[d][k];
                if self.tasks[s].status != TaskStatus::Pending {
                    continue;
                }
                let Some(reason) = self.tasks[s]
                    .blocked_by
                    .iter()
                    .filter_map(|b| self.get(b))
                    .find(|dep| dep.status.is_dead())
                    .map(|dep| format!("dependency {} {}", dep.id, dep.status.as_str()))
                else {
                    continue;
                };
                self.set_status(s, TaskStatus::Skipped);
                self.tasks[s].reason = Some(reason.clone());
                skipped.push((self.tasks[s].id.clone(), reason));
            }
        }
        skipped
    }

    /// Adds tasks (a GC round or a dynamic role) and makes every task that waited on `rewire_from`
    /// wait on `rewire_to` instead. Validates the result; on error nothing changes.
    pub fn insert(
        &mut self,
        new_tasks: Vec<Task>,
        rewire: Option<(&str, &str)>,
        role_exists: impl Fn(&str) -> bool,
    ) -> Result<(), GraphError> {
        let mut next = self.clone();
        let first_new = next.tasks.len();
        let new_ids: HashSet<String> = new_tasks.iter().map(|t| t.id.clone()).collect();
        next.tasks.extend(new_tasks);
        let mut touched: Vec<usize> = (first_new..next.tasks.len()).collect();
        if let Some((from, to)) = rewire {
            for (i, t) in next.tasks.iter_mut().enumerate() {
                if new_ids.contains(&t.id) || t.status != TaskStatus::Pending {
                    continue;
                }
                for b in t.blocked_by.iter_mut() {
                    if b == from {
                        *b = to.to_string();
                        touched.push(i);
                    }
                }
            }
        }
        let changed = std::mem::take(&mut next.changed);
        next.reindex();
        next.validate(role_exists)?;
        next.changed = changed;
        for i in touched {
            next.note_changed(i);
        }
        *self = next;
        Ok(())
    }

    /// No task is pending or in progress.
    pub fn is_settled(&self) -> bool {
        !self
            .tasks
            .iter()
            .any(|t| matches!(t.status, TaskStatus::Pending | TaskStatus::InProgress))
    }

    /// GC rounds opened per layer code (`L1`), read from the fix tasks themselves so that it can
    /// never disagree with tasks.json.
    pub fn gc_rounds(&self) -> std::collections::BTreeMap<String, u32> {
        if !self.stale {
            return self.sched.gc_rounds.clone();
        }
        let mut rounds = std::collections::BTreeMap::new();
        for t in &self.tasks {
            let (Some(layer), Some(round)) = (&t.layer, t.gc_round()) else {
                continue;
            };
            let entry = rounds
                .entry(super::layer_code(layer).to_string())
                .or_insert(0);
            *entry = (*entry).max(round as u32);
        }
        rounds
    }

    pub fn count(&self, status: TaskStatus) -> usize {
        self.tasks.iter().filter(|t| t.status == status).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(id: &str, owner: &str, blocked_by: &[&str]) -> Task {
        Task::new(
            id,
            id,
            owner,
            blocked_by.iter().map(|s| s.to_string()).collect(),
        )
    }

    fn chain() -> TaskGraph {
        TaskGraph::new(vec![
            task("A", "r", &[]),
            task("B", "r", &["A"]),
            task("C", "r", &["B"]),
        ])
    }

    #[test]
    fn a_not_applicable_generator_takes_its_layers_run_along_but_not_other_roles() {
        let layered = |id: &str, owner: &str, after: &[&str], layer: &str| Task {
            layer: Some(layer.into()),
            ..task(id, owner, after)
        };
        let mut g = TaskGraph::new(vec![
            layered("GEN-1", "generator", &[], "L1-unit"),
            layered("RUN-1", "executor", &["GEN-1"], "L1-unit"),
            layered("LINT-1", "lint", &["GEN-1"], "L1-unit"),
            layered("GEN-2", "generator", &["RUN-1"], "L2-integration"),
        ]);
        let also = g
            .not_applicable(
                "GEN-1",
                Outcome::not_applicable("no generator for go"),
                &["generator", "executor"],
                "now",
            )
            .unwrap();
        assert_eq!(also, ["RUN-1"]);
        let status = |id: &str| g.get(id).unwrap().status;
        assert_eq!(status("GEN-1"), TaskStatus::NotApplicable);
        assert_eq!(status("LINT-1"), TaskStatus::Pending);
        assert_eq!(status("GEN-2"), TaskStatus::Pending);
        assert_eq!(
            g.get("RUN-1").unwrap().reason.as_deref(),
            Some("no generator for go")
        );
        // Not applicable is done: the next layer may start.
        assert!(g.ready().iter().any(|t| t.id == "GEN-2"));
    }

    #[test]
    fn validation_names_the_task() {
        let g = TaskGraph::new(vec![task("A", "r", &["Z"])]);
        assert_eq!(
            g.validate(|_| true),
            Err(GraphError::Dangling {
                task: "A".into(),
                missing: "Z".into()
            })
        );
        let g = TaskGraph::new(vec![task("A", "ghost", &[])]);
        assert!(matches!(
            g.validate(|r| r == "r"),
            Err(GraphError::UnknownOwner { .. })
        ));
        let g = TaskGraph::new(vec![task("A", "r", &["B"]), task("B", "r", &["A"])]);
        assert!(matches!(
            g.validate(|_| true),
            Err(GraphError::Cycle { .. })
        ));
    }

    #[test]
    fn ready_claim_complete() {
        let mut g = chain();
        assert_eq!(g.ready().len(), 1);
        g.claim("A", "r", "t").unwrap();
        assert!(g.claim("B", "r", "t").is_err());
        g.complete("A", Outcome::completed("ok"), "t").unwrap();
        assert_eq!(g.ready()[0].id, "B");
    }

    #[test]
    fn failure_retries_once_then_skips_successors() {
        let mut g = chain();
        g.claim("A", "r", "t").unwrap();
        assert!(g.fail_attempt("A", "boom", 2, None, "t").unwrap());
        g.claim("A", "r", "t").unwrap();
        assert!(!g.fail_attempt("A", "boom", 2, None, "t").unwrap());
        let skipped = g.propagate_skips();
        assert_eq!(skipped.len(), 2);
        assert_eq!(skipped[0].1, "dependency A failed");
        assert_eq!(skipped[1].1, "dependency B skipped");
        assert!(g.is_settled());
    }

    /// The ready set by definition, scanning every task.
    fn ready_by_scan(g: &TaskGraph) -> Vec<String> {
        g.tasks
            .iter()
            .filter(|t| t.status == TaskStatus::Pending)
            .filter(|t| {
                t.blocked_by
                    .iter()
                    .all(|b| g.get(b).is_some_and(|d| d.status.is_done()))
            })
            .map(|t| t.id.clone())
            .collect()
    }

    #[test]
    fn the_incremental_ready_set_always_equals_a_full_scan() {
        // A seeded random DAG (each task waits on up to three earlier ones), driven through
        // claims, completions, failures with retries, skips and in-place edits.
        let mut seed = 7u64;
        let mut next = move |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        let n = 300;
        let tasks: Vec<Task> = (0..n)
            .map(|i| {
                let deps: Vec<String> = (0..if i == 0 { 0 } else { next(4) })
                    .map(|_| format!("T{}", next(i)))
                    .collect();
                Task::new(&format!("T{i}"), "t", "r", deps)
            })
            .collect();
        let mut g = TaskGraph::new(tasks);
        for step in 0..2000 {
            let scan = ready_by_scan(&g);
            let fast: Vec<String> = g.ready().iter().map(|t| t.id.clone()).collect();
            assert_eq!(fast, scan, "step {step}");
            let running: Vec<String> = g.in_progress().map(|t| t.id.clone()).collect();
            match next(10) {
                0..=3 if !scan.is_empty() => {
                    let id = scan[next(scan.len())].clone();
                    g.claim(&id, "w", "t").unwrap();
                }
                4..=6 if !running.is_empty() => {
                    let id = &running[next(running.len())];
                    g.complete(id, Outcome::completed("ok"), "t").unwrap();
                }
                7 if !running.is_empty() => {
                    let id = &running[next(running.len())];
                    g.fail_attempt(id, "boom", 2, None, "t").unwrap();
                    g.propagate_skips();
                }
                8 => {
                    // An edit in place: the index is rebuilt before its next use.
                    let id = format!("T{}", next(n));
                    if let Some(t) = g.get_mut(&id) {
                        if t.status == TaskStatus::Completed {
                            t.status = TaskStatus::Deleted;
                        }
                    }
                }
                _ => {}
            }
            assert_eq!(g.in_progress_count(), g.count(TaskStatus::InProgress));
        }
        assert!(g.count(TaskStatus::Completed) > 0 && g.count(TaskStatus::Skipped) > 0);
    }

    #[test]
    fn insert_rewires_waiters() {
        let mut g = chain();
        g.insert(
            vec![task("B-fix", "r", &["B"]), task("B-run", "r", &["B-fix"])],
            Some(("B", "B-run")),
            |_| true,
        )
        .unwrap();
        assert_eq!(g.get("C").unwrap().blocked_by, vec!["B-run".to_string()]);
        assert_eq!(g.get("B-fix").unwrap().blocked_by, vec!["B".to_string()]);
    }
}
