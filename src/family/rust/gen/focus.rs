//! What a change-scoped search aims at: the callables whose lines the change touched and those
//! whose body calls one of them. They get twice the candidates, and the calls of theirs that
//! ran are listed for the comparison with the base (`replay`), kept or not: a behaviour that
//! changed through a call chain counts.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::model::Api;
use super::probe::{Candidate, Source};

/// Calls listed per touched callable (distinct by their text).
const CALLS_PER_CALLABLE: usize = 24;

/// The touched callables and the calls of theirs seen so far.
#[derive(Default)]
pub struct Focus {
    touched: BTreeSet<usize>,
    listed: BTreeMap<usize, BTreeSet<String>>,
    pub calls: Vec<Candidate>,
}

impl Focus {
    /// Among `callables` (indices into `api.callables`), those with a line in `changed` (file
    /// -> lines of HEAD's file), then, until nothing is added, those whose body in `copy`
    /// calls one of them by name.
    pub fn new(
        api: &Api,
        callables: &[usize],
        changed: &BTreeMap<String, Vec<u32>>,
        copy: &Path,
    ) -> Focus {
        let mut touched: BTreeSet<usize> = callables
            .iter()
            .copied()
            .filter(|i| {
                let c = &api.callables[*i];
                changed
                    .get(&c.file)
                    .is_some_and(|lines| lines.iter().any(|l| (c.lines.0..=c.lines.1).contains(l)))
            })
            .collect();
        if touched.is_empty() {
            return Focus::default();
        }
        let mut files: BTreeMap<&str, Vec<String>> = BTreeMap::new();
        for i in callables {
            let file = api.callables[*i].file.as_str();
            files.entry(file).or_insert_with(|| {
                std::fs::read_to_string(copy.join(file))
                    .map(|t| t.lines().map(String::from).collect())
                    .unwrap_or_default()
            });
        }
        let body = |i: usize| {
            let c = &api.callables[i];
            let lines = &files[c.file.as_str()];
            let from = (c.lines.0 as usize).saturating_sub(1).min(lines.len());
            let to = (c.lines.1 as usize).min(lines.len()).max(from);
            lines[from..to].join("\n")
        };
        loop {
            let names: BTreeSet<&str> = touched
                .iter()
                .map(|i| api.callables[*i].name.as_str())
                .collect();
            let callers: Vec<usize> = callables
                .iter()
                .copied()
                .filter(|i| !touched.contains(i))
                .filter(|i| names.iter().any(|n| calls_by_name(&body(*i), n)))
                .collect();
            if callers.is_empty() {
                break;
            }
            touched.extend(callers);
        }
        Focus {
            touched,
            ..Focus::default()
        }
    }

    pub fn contains(&self, callable: usize) -> bool {
        self.touched.contains(&callable)
    }

    /// Lists `c` when it calls a touched callable and its callable has room for one more.
    pub fn offer(&mut self, c: &Candidate) {
        let Source::Callable(i) = c.source else {
            return;
        };
        if !self.touched.contains(&i) {
            return;
        }
        let listed = self.listed.entry(i).or_default();
        if listed.len() < CALLS_PER_CALLABLE && listed.insert(c.call.clone()) {
            self.calls.push(c.clone());
        }
    }
}

/// Whether `code` calls a function or method named `name`: `name(`, `.name(`, `::name(`, not
/// inside a longer identifier.
fn calls_by_name(code: &str, name: &str) -> bool {
    let pattern = format!("{name}(");
    code.match_indices(&pattern).any(|(at, _)| {
        !code[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_')
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_is_found_by_its_whole_name() {
        assert!(calls_by_name("let x = total_price(a, b);", "total_price"));
        assert!(calls_by_name("self.total_price(1)", "total_price"));
        assert!(calls_by_name("crate::total_price(1)", "total_price"));
        assert!(!calls_by_name("grand_total_price(1)", "total_price"));
        assert!(!calls_by_name("fn total_price_of(1)", "total_price"));
    }
}
