//! A family's built-in generator, as the one generator role uses it: which of the scope's files
//! are modules to test, the search itself, and how a round's file is made from the search's file
//! and the earlier round's. The role (`team::generator`) does the rest the same way for every
//! family: feedback, the revision strategy, shards, the history a surgical round goes back to.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::gen::behaviour::{ReplayRequest, ReplayResult};
use crate::gen::{GenError, GenRequest, GenResult, ModuleRef};
use crate::sandbox::Sandbox;
use crate::testing::framework::Framework;

/// One search: the request, in a mirror of the repository, sandboxed, within `timeout`.
pub struct GenJob<'a> {
    pub repo: &'a Path,
    /// The session's folder (what a family keeps between rounds lives in its workspace).
    pub session: &'a Path,
    pub mirror: &'a Path,
    pub scratch: &'a Path,
    pub framework: Framework,
    pub req: &'a GenRequest,
    pub timeout: Duration,
    pub sandbox: Option<&'a Sandbox>,
}

/// A replay of a search's calls in a mirror of the project at some commit, sandboxed, within
/// `timeout`.
pub struct ReplayJob<'a> {
    pub repo: &'a Path,
    pub mirror: &'a Path,
    /// The mirror is the base commit's (not the one the search ran in).
    pub base: bool,
    pub scratch: &'a Path,
    pub req: &'a ReplayRequest,
    pub timeout: Duration,
    pub sandbox: Option<&'a Sandbox>,
}

/// What a round's file is made from.
pub struct Revision<'a> {
    /// The layer's file as the last round left it ("" when there is none).
    pub previous: &'a str,
    /// The file the search wrote this round.
    pub new: &'a str,
    /// Tests that found code defects (test id -> the evidence): carried over, marked as the
    /// framework's expected failures.
    pub defects: &'a BTreeMap<String, String>,
    /// Tests the executor found broken, flaky or unsafe: never carried over.
    pub avoid: &'a BTreeSet<String>,
    /// A GC round revising the layer (not its first round).
    pub revising: bool,
    pub framework: Framework,
    /// The project's installed node_modules, when it has them.
    pub node_modules: Option<&'a Path>,
}

pub trait Generator: Sync {
    /// What its modules are called in a sentence: "Python module".
    fn module_words(&self) -> &'static str;
    /// Why L3 has nothing to run in a project with no entry point.
    fn no_entry_points(&self) -> &'static str;
    /// The modules a round tests among `files` (the project's source files in scope, present).
    fn modules(
        &self,
        repo: &Path,
        framework: Option<Framework>,
        files: &[String],
    ) -> Vec<ModuleRef>;
    /// The entry points L3 would run, found by reading files only (no project code runs).
    fn entry_points(&self, repo: &Path, scratch: &Path) -> Result<Vec<String>, GenError>;
    /// What the search reads outside the mirror (the interpreter, node).
    fn read_roots(&self, repo: &Path) -> Vec<PathBuf>;
    /// Folders the search writes besides its scratch's temporary files (Rust: the raw profiles
    /// of its runs and the target folder its builds share), made before it runs.
    fn write_dirs(&self, _session: &Path, _layer: &str) -> Vec<PathBuf> {
        Vec::new()
    }
    /// Makes the mirror ready for the search (node: the project's node_modules linked in).
    fn prepare_mirror(&self, repo: &Path, session: &Path, mirror: &Path) -> std::io::Result<()>;
    /// One search.
    fn generate(&self, job: &GenJob) -> Result<GenResult, GenError>;
    /// Whether helpers may run at the same time: searches over different modules in one mirror,
    /// and the replays of a change's two versions (an interpreter's helper, whose calls are forked
    /// children); false where a search builds in a folder its builds share, which lets one build
    /// at a time.
    fn searches_side_by_side(&self) -> bool {
        false
    }
    /// Whether the helper shares a search's budget among its modules by their size (Python's, by
    /// their lines) rather than in equal shares (JavaScript's): how a search split over workers
    /// gives each its share.
    fn shares_budget_by_size(&self) -> bool {
        true
    }
    /// Whether `module` is in `base` (a mirror of a change's base commit): a module the change
    /// added has nothing there to compare with. By default its file is there; a family that
    /// finds a module otherwise (by import name, by package folder) says so.
    fn on_base(&self, base: &Path, module: &ModuleRef) -> bool {
        base.join(&module.file).is_file()
    }
    /// A test as the feedback names it, as the search and the file name it.
    fn test_key(&self, id: &str) -> String {
        id.to_string()
    }
    /// The round's file: the search's, with the earlier tests that survive carried over and the
    /// defect tests in the framework's expected-failure form.
    fn revise(&self, revision: &Revision) -> String;
    /// Whether a file of the layer's folder is one of its test files (a surgical round restores
    /// them).
    fn is_test_file(&self, name: &str) -> bool;
    /// How the summary names its tests: "tests", "jest tests".
    fn tests_noun(&self, framework: Framework) -> String;
    /// How defect tests are kept, for the summary: "xfail".
    fn defects_kept_as(&self) -> &'static str;
    /// How a module that did not load is said: "failed to import".
    fn unloadable(&self) -> &'static str;
    /// Whether the plan's scenarios with stated checks become tests of this family.
    fn writes_scenario_checks(&self) -> bool {
        false
    }
    /// The folders a replay writes besides the mirror it runs in, which it writes too (Rust:
    /// the search's target folder); None when it writes nothing at all.
    fn replay_writes(&self, _session: &Path, _layer: &str) -> Option<Vec<PathBuf>> {
        None
    }
    /// What each of the search's calls does in `job.mirror` (the project at another commit):
    /// every family compares a change with its base. None only where a family's helper cannot
    /// replay at all.
    fn replay(&self, job: &ReplayJob) -> Option<Result<ReplayResult, GenError>>;
    /// `source` (a test file of the family) with only the tests named in `keep`; None when it
    /// would keep none.
    fn keep_only(&self, source: &str, keep: &BTreeSet<String>) -> Option<String>;
    /// The project files a search of `file` depends on, `file` included (what it imports, to a
    /// fixed point, and the manifest), among the family's `sources`: a module's cached tests
    /// are reused only while none of them changed.
    fn search_reads(&self, repo: &Path, file: &str, sources: &[String]) -> BTreeSet<String>;
    /// Whether a short search gives tests in seconds, so a long first round runs one ahead of
    /// its deep search (an interpreted helper); false where every search pays a build first.
    fn quick_first_pass(&self) -> bool;
}
