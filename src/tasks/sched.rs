//! The graph's scheduling index: successors, unmet dependency counts, the ready set and the
//! running set. Every status change through [`super::TaskGraph`]'s methods updates it for the
//! task and its direct successors only, so a beat costs what changed, never a rescan of the graph.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};

use super::{layer_code, Task, TaskStatus};

#[derive(Debug, Clone, Default)]
pub(super) struct Sched {
    /// For each task, the tasks that list it in blockedBy (once per listing).
    pub successors: Vec<Vec<usize>>,
    /// For each task, its blockedBy entries not done yet (a dangling one never is).
    pub unmet: Vec<u32>,
    /// Pending tasks with nothing unmet, by creation index (dispatch order).
    pub ready: BTreeSet<usize>,
    pub running: BTreeSet<usize>,
    /// Failed or skipped tasks whose pending successors are still to be skipped.
    pub dead: VecDeque<usize>,
    /// GC rounds per layer code, from the fix tasks' `gc_round`.
    pub gc_rounds: BTreeMap<String, u32>,
}

impl Sched {
    pub fn build(tasks: &[Task], index: &HashMap<String, usize>) -> Sched {
        let n = tasks.len();
        let mut s = Sched {
            successors: vec![Vec::new(); n],
            unmet: vec![0; n],
            ..Sched::default()
        };
        for (i, t) in tasks.iter().enumerate() {
            for b in &t.blocked_by {
                match index.get(b) {
                    Some(&j) => {
                        s.successors[j].push(i);
                        if !tasks[j].status.is_done() {
                            s.unmet[i] += 1;
                        }
                    }
                    None => s.unmet[i] += 1,
                }
            }
            s.count_gc_round(t);
        }
        for (i, t) in tasks.iter().enumerate() {
            match t.status {
                TaskStatus::Pending if s.unmet[i] == 0 => {
                    s.ready.insert(i);
                }
                TaskStatus::InProgress => {
                    s.running.insert(i);
                }
                st if st.is_dead() => s.dead.push_back(i),
                _ => {}
            }
        }
        s
    }

    fn count_gc_round(&mut self, t: &Task) {
        let (Some(layer), Some(round)) = (&t.layer, t.gc_round()) else {
            return;
        };
        let entry = self
            .gc_rounds
            .entry(layer_code(layer).to_string())
            .or_insert(0);
        *entry = (*entry).max(round as u32);
    }

    /// Task `i` moved from `old` to `tasks[i].status`: updates the sets and its successors.
    pub fn moved(&mut self, tasks: &[Task], i: usize, old: TaskStatus) {
        let new = tasks[i].status;
        if old == new {
            return;
        }
        match old {
            TaskStatus::Pending => {
                self.ready.remove(&i);
            }
            TaskStatus::InProgress => {
                self.running.remove(&i);
            }
            _ => {}
        }
        match new {
            TaskStatus::Pending if self.unmet[i] == 0 => {
                self.ready.insert(i);
            }
            TaskStatus::InProgress => {
                self.running.insert(i);
            }
            st if st.is_dead() => self.dead.push_back(i),
            _ => {}
        }
        if old.is_done() != new.is_done() {
            for &s in &self.successors[i] {
                if new.is_done() {
                    self.unmet[s] -= 1;
                    if self.unmet[s] == 0 && tasks[s].status == TaskStatus::Pending {
                        self.ready.insert(s);
                    }
                } else {
                    self.unmet[s] += 1;
                    self.ready.remove(&s);
                }
            }
        }
    }
}
