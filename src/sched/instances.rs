//! The worker instances tasks were handed to, by name: their role and the tasks they hold. The
//! workers themselves (actors, processes) belong to whoever carries out the effects.

use std::collections::HashMap;

#[derive(Debug, Default)]
pub(super) struct Instances {
    by_name: HashMap<String, Instance>,
}

#[derive(Debug)]
pub(super) struct Instance {
    pub role: String,
    /// Tasks handed to it and not yet reported, in the order given.
    pub tasks: Vec<String>,
}

impl Instances {
    pub fn contains(&self, name: &str) -> bool {
        self.by_name.contains_key(name)
    }

    /// A name for one more instance beside `base`: the first of `base-2`, `base-3`, … unused.
    pub fn free_name(&self, base: &str) -> String {
        (2..)
            .map(|n| format!("{base}-{n}"))
            .find(|n| !self.contains(n))
            .expect("an unused name exists")
    }

    /// Hands `task` to `name`; returns true when that instance is new.
    pub fn assign(&mut self, name: &str, role: &str, task: &str) -> bool {
        let mut new = false;
        let instance = self.by_name.entry(name.to_string()).or_insert_with(|| {
            new = true;
            Instance {
                role: role.to_string(),
                tasks: Vec::new(),
            }
        });
        instance.tasks.push(task.to_string());
        new
    }

    /// The task is no longer the instance's. Returns true when the instance is let go: nothing
    /// left to do, and not an inner-loop worker (that one waits for its layer's next task).
    pub fn release(&mut self, name: &str, task: &str, inner_loop: bool) -> bool {
        let Some(instance) = self.by_name.get_mut(name) else {
            return false;
        };
        instance.tasks.retain(|t| t != task);
        if instance.tasks.is_empty() && !inner_loop {
            self.by_name.remove(name);
            return true;
        }
        false
    }

    pub fn remove(&mut self, name: &str) -> Option<Instance> {
        self.by_name.remove(name)
    }

    pub fn clear(&mut self) {
        self.by_name.clear();
    }
}
