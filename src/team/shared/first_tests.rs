//! Tests in seconds. A first round whose search will take a while first runs a short search of
//! the same modules and writes its files at once, into `first-tests/<layer>/` of the session: the
//! user has tests to read and run while the deep search goes on. They are not the layer's tests
//! (`tests/<layer>/`): no run judges them and `apply` never delivers them; the folder goes when
//! the deep search has written the layer's.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::family::generator::{Generator, Revision};
use crate::gen::{GenRequest, GenResult};
use crate::team::error::RoleError;
use crate::team::RoleContext;
use crate::testing::framework::Framework;

/// A deep search given less than this gives its first tests soon enough itself.
const WORTH_IT_S: f64 = 15.0;
/// Nor does one of fewer lines (as the helpers weigh them, 60 at least a module): a search
/// stops early on counts, and small modules run out of things to try in seconds.
const WORTH_IT_LINES: f64 = 400.0;
/// The short search's time per module (a few calls of each function), and its ceiling.
const PER_MODULE_S: f64 = 0.3;
const MOST_S: f64 = 6.0;

/// The short search ahead of `deep` (its modules weighing `lines`), when `deep` is long enough
/// to want one.
pub fn quick_request(deep: &GenRequest, lines: f64) -> Option<GenRequest> {
    if deep.budget_s < WORTH_IT_S || lines < WORTH_IT_LINES || deep.modules.is_empty() {
        return None;
    }
    Some(GenRequest {
        budget_s: (PER_MODULE_S * deep.modules.len() as f64).clamp(1.0, MOST_S),
        // Aiming at the change's lines, with boundary inputs, is the deep search's work.
        changed: BTreeMap::new(),
        ..deep.clone()
    })
}

/// The session's folder of a layer's first tests.
pub fn folder(session: &Path, layer: &str) -> PathBuf {
    session.join("first-tests").join(layer)
}

/// What the short search wrote.
#[derive(Debug, Default)]
pub struct FirstTests {
    /// Its folder, and its files there by name.
    pub dir: PathBuf,
    pub files: BTreeSet<String>,
    pub tests: usize,
    /// When they were written (the log's timestamp format).
    pub at: String,
}

/// The short search ahead of `deep`, a long first round's (run by `search`), its files written
/// into the layer's `folder` at once and said in the progress. None when the round is short, or
/// the short search failed: the deep one goes on regardless.
pub fn ahead(
    ctx: &RoleContext,
    (framework, generator): (Framework, &dyn Generator),
    deep: &GenRequest,
    search: impl FnOnce(&GenRequest) -> Result<GenResult, RoleError>,
) -> Option<FirstTests> {
    let quick = quick_request(deep, super::gen_cache::size_weight(ctx.repo, &deep.modules))?;
    let node_modules = crate::testing::deps::node_modules(ctx.repo, &ctx.session.root);
    let dir = folder(&ctx.session.root, &deep.layer);
    let written = search(&quick)
        .map_err(|e| e.to_string())
        .and_then(|result| {
            write(&dir, &result, generator, framework, node_modules.as_deref())
                .map_err(|e| e.to_string())
        });
    match written {
        Ok(first) => {
            let said = format!(
                "{} tests in {} file(s) in first-tests/{}/; the search goes on",
                first.tests,
                first.files.len(),
                deep.layer
            );
            (ctx.progress)("first_tests", Some(18.0), Some(said));
            Some(first)
        }
        Err(problem) => {
            (ctx.progress)("first_tests", None, Some(format!("none: {problem}")));
            None
        }
    }
}

/// Writes the short search's test files into `dir` (made afresh: a resumed round's are
/// replaced) as a first round writes them.
pub fn write(
    dir: &Path,
    result: &GenResult,
    generator: &dyn Generator,
    framework: Framework,
    node_modules: Option<&Path>,
) -> Result<FirstTests, crate::util::FileError> {
    let _ = std::fs::remove_dir_all(dir);
    crate::util::mkdirs(dir)?;
    let mut first = FirstTests {
        dir: dir.to_path_buf(),
        ..FirstTests::default()
    };
    let (defects, avoid) = (BTreeMap::new(), BTreeSet::new());
    for m in result.modules.iter().filter(|m| !m.source.is_empty()) {
        let path = dir.join(&m.test_file);
        let source = generator.revise(&Revision {
            previous: "",
            new: &m.source,
            defects: &defects,
            avoid: &avoid,
            revising: false,
            framework,
            node_modules,
        });
        crate::util::atomic_write(&path, source.as_bytes())?;
        first.files.insert(m.test_file.clone());
        first.tests += m.tests.len();
    }
    first.at = crate::util::now_ts();
    Ok(first)
}

/// After the deep search wrote the layer's files: the first tests go.
pub fn retire(first: &FirstTests) {
    let _ = std::fs::remove_dir_all(&first.dir);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::ModuleRef;

    fn request(modules: usize, budget_s: f64) -> GenRequest {
        GenRequest {
            modules: (0..modules)
                .map(|i| ModuleRef {
                    module: format!("m{i}"),
                    file: format!("m{i}.py"),
                })
                .collect(),
            layer: "L1-unit".into(),
            seed: 7,
            budget_s,
            call_timeout_s: 2.0,
            target_percent: 80.0,
            missing: BTreeMap::new(),
            avoid: Vec::new(),
            changed: BTreeMap::from([("m0.py".to_string(), vec![3])]),
        }
    }

    #[test]
    fn only_a_long_search_gets_a_short_one_ahead_of_the_same_modules() {
        assert!(
            quick_request(&request(1, 8.0), 900.0).is_none(),
            "8 s is soon enough"
        );
        assert!(
            quick_request(&request(3, 24.0), 180.0).is_none(),
            "three small modules end early"
        );
        let quick = quick_request(&request(4, 32.0), 900.0).expect("a long search");
        assert_eq!(quick.modules, request(4, 32.0).modules);
        assert_eq!((quick.budget_s, quick.seed), (1.2, 7));
        assert!(quick.changed.is_empty());
        let many = quick_request(&request(60, 480.0), 3600.0).unwrap();
        assert_eq!(many.budget_s, MOST_S, "a ceiling, whatever the size");
    }
}
