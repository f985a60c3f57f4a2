use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

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
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct TaskGraph {
    #[serde(default = "format_version")]
    pub version: u32,
    pub tasks: Vec<Task>,
    #[serde(skip)]
    index: HashMap<String, usize>,
}

fn format_version() -> u32 {
    1
}

impl TaskGraph {
    pub fn new(tasks: Vec<Task>) -> Self {
        let mut graph = TaskGraph {
            version: format_version(),
            tasks,
            index: HashMap::new(),
        };
        graph.reindex();
        graph
    }

    /// Rebuilds the id index; call after deserializing.
    pub fn reindex(&mut self) {
        self.index = self
            .tasks
            .iter()
            .enumerate()
            .map(|(i, t)| (t.id.clone(), i))
            .collect();
    }

    pub fn get(&self, id: &str) -> Option<&Task> {
        self.index.get(id).map(|&i| &self.tasks[i])
    }

    pub fn get_mut(&mut self, id: &str) -> Option<&mut Task> {
        self.index.get(id).map(|&i| &mut self.tasks[i])
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

    /// Pending tasks whose blockedBy are all completed (or deleted), in creation order.
    pub fn ready(&self) -> Vec<&Task> {
        self.tasks
            .iter()
            .filter(|t| t.status == TaskStatus::Pending)
            .filter(|t| {
                t.blocked_by
                    .iter()
                    .all(|b| self.get(b).is_some_and(|d| d.status.is_done()))
            })
            .collect()
    }

    pub fn in_progress(&self) -> impl Iterator<Item = &Task> {
        self.tasks
            .iter()
            .filter(|t| t.status == TaskStatus::InProgress)
    }

    /// pending -> in_progress, recorded before the worker starts.
    pub fn claim(&mut self, id: &str, worker: &str, now: &str) -> Result<(), GraphError> {
        let ready = self.ready().iter().any(|t| t.id == id);
        let task = self
            .get_mut(id)
            .ok_or_else(|| GraphError::Unknown(id.to_string()))?;
        if !ready {
            return Err(GraphError::NotClaimable {
                task: id.to_string(),
                status: task.status.as_str(),
            });
        }
        task.status = TaskStatus::InProgress;
        task.worker = Some(worker.to_string());
        task.claimed_at = Some(now.to_string());
        task.attempts += 1;
        Ok(())
    }

    pub fn complete(&mut self, id: &str, outcome: Outcome, now: &str) -> Result<(), GraphError> {
        let task = self
            .get_mut(id)
            .ok_or_else(|| GraphError::Unknown(id.to_string()))?;
        task.status = TaskStatus::Completed;
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
        let task = self
            .get_mut(id)
            .ok_or_else(|| GraphError::Unknown(id.to_string()))?;
        task.reason = Some(reason.to_string());
        task.outcome = outcome;
        if task.attempts < max_attempts {
            task.status = TaskStatus::Pending;
            task.claimed_at = None;
            task.worker = None;
            Ok(true)
        } else {
            task.status = TaskStatus::Failed;
            task.completed_at = Some(now.to_string());
            Ok(false)
        }
    }

    /// Skips every pending task that waits on a failed or skipped one, transitively, and says which
    /// dependency. Returns (task, reason) for each newly skipped task.
    pub fn propagate_skips(&mut self) -> Vec<(String, String)> {
        let mut skipped = Vec::new();
        loop {
            let next = self.tasks.iter().find_map(|t| {
                if t.status != TaskStatus::Pending {
                    return None;
                }
                t.blocked_by.iter().find_map(|b| {
                    let dep = self.get(b)?;
                    dep.status.is_dead().then(|| {
                        (
                            t.id.clone(),
                            format!("dependency {} {}", dep.id, dep.status.as_str()),
                        )
                    })
                })
            });
            let Some((id, reason)) = next else { break };
            let task = self.get_mut(&id).expect("found above");
            task.status = TaskStatus::Skipped;
            task.reason = Some(reason.clone());
            skipped.push((id, reason));
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
        let new_ids: HashSet<String> = new_tasks.iter().map(|t| t.id.clone()).collect();
        next.tasks.extend(new_tasks);
        next.reindex();
        if let Some((from, to)) = rewire {
            for t in next.tasks.iter_mut() {
                if new_ids.contains(&t.id) || t.status != TaskStatus::Pending {
                    continue;
                }
                for b in t.blocked_by.iter_mut() {
                    if b == from {
                        *b = to.to_string();
                    }
                }
            }
        }
        next.validate(role_exists)?;
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
        let mut rounds = std::collections::BTreeMap::new();
        for t in &self.tasks {
            let (Some(layer), Some(round)) =
                (&t.layer, t.meta.get("gc_round").and_then(|v| v.as_u64()))
            else {
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
