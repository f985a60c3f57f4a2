//! specs/team-config.json: roles, pipelines (task registries), targets and limits, as data.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::tasks::{GraphError, Task, TaskGraph};

/// The config shipped with the binary; `--spec FILE` loads another.
pub const BUILTIN_CONFIG: &str = include_str!("../../specs/team-config.json");
pub const BUILTIN_CONFIG_NAME: &str = "specs/team-config.json (built in)";

pub use crate::tasks::{DynamicMarker, InnerLoop};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoleConfig {
    pub name: String,
    /// Task id prefix (STRATEGY, TESTGEN, …); the coordinator has none.
    pub prefix: Option<String>,
    pub inner_loop: InnerLoop,
    pub message_types: Vec<String>,
    #[serde(default)]
    pub description: String,
    /// The PURPOSE/TASK/EXPECTED/CONSTRAINTS parts of this role's task descriptions.
    #[serde(default)]
    pub task_template: Option<TaskTemplate>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskTemplate {
    pub purpose: String,
    pub steps: Vec<String>,
    pub expected: String,
    pub constraints: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskSpec {
    pub id: String,
    pub owner: String,
    /// Worker instance for parallel windows (`generator-1`); defaults to the owner.
    #[serde(default)]
    pub instance: Option<String>,
    pub subject: String,
    #[serde(rename = "blockedBy")]
    pub blocked_by: Vec<String>,
    #[serde(default)]
    pub layer: Option<String>,
    /// Required when the owner's inner_loop is dynamic.
    #[serde(default)]
    pub inner_loop: Option<bool>,
    /// Which of its steps the role does, for a role with several (the fixer: `validate` or
    /// `cycle`); kept in the task's meta as `step`.
    #[serde(default)]
    pub step: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PipelineSpec {
    pub description: String,
    pub tasks: Vec<TaskSpec>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GcRoles {
    /// The role that writes and revises tests.
    pub generator: String,
    /// The role that runs them and judges the gate.
    pub critic: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TeamConfig {
    pub version: u32,
    pub team_name: String,
    pub session_prefix: String,
    pub pass_rate_target: f64,
    pub max_gc_rounds: u32,
    pub max_roles: usize,
    /// Attempts per task: 2 = one retry.
    pub max_attempts: u32,
    pub coverage_targets: BTreeMap<String, f64>,
    /// Branch coverage the gate asks for next to line coverage (the sibling workflow's 70 %),
    /// never more than the layer's own line target.
    #[serde(default = "default_branch_target")]
    pub branch_coverage_target: f64,
    pub gc: GcRoles,
    /// A GC round that gains fewer points of line coverage than this (and no branch coverage
    /// and no pass rate) ends its layer's loop below the gate, with what it gained; 0 never.
    #[serde(default = "default_plateau_points")]
    pub gc_plateau_points: f64,
    /// The built-in generator's search budget per module, in seconds: a layer gets this times
    /// the number of modules in scope. The default (8 s) keeps a whole generation under a third of
    /// Pynguin's time for the same modules (20 s of search per module plus its start-up; see
    /// BENCHMARKS.md).
    #[serde(default = "default_module_budget")]
    pub generator_module_budget_s: f64,
    /// Per-layer overrides of `generator_module_budget_s` (`{"L2-integration": 10}`).
    #[serde(default)]
    pub generator_layer_module_budget_s: BTreeMap<String, f64>,
    /// Helpers searching a layer's modules side by side, each over its share of them and of the
    /// budget (default: the machine's cores, at most four), where the family's helper can run
    /// beside itself (Python, JavaScript/TypeScript); 1 searches them one after the other.
    #[serde(default = "default_generator_workers")]
    pub generator_workers: usize,
    /// The cap on one layer's generation budget, in seconds, whatever the modules.
    #[serde(default = "default_generator_budget")]
    pub generator_budget_s: f64,
    /// Per-call timeout of the built-in generator's sandboxed calls, in seconds.
    #[serde(default = "default_call_timeout")]
    pub generator_call_timeout_s: f64,
    /// The analyst's mutation analysis, all suites together, in seconds (at most half of what
    /// its task has left).
    #[serde(default = "default_mutation_budget")]
    pub mutation_budget_s: f64,
    /// Mutants per session at most, sampled with the session's seed, stratified over files.
    #[serde(default = "default_max_mutants")]
    pub mutation_max_mutants: usize,
    /// Mutants run at the same time, each in a copy of its own (default: the machine's cores,
    /// at most four).
    #[serde(default = "default_mutation_workers")]
    pub mutation_workers: usize,
    pub roles: Vec<RoleConfig>,
    pub pipelines: BTreeMap<String, PipelineSpec>,
    #[serde(skip)]
    pub source: PathBuf,
    /// `--strategy reflective` (a run control): the GC loop converges at once when every
    /// remaining failure is a code defect.
    #[serde(skip)]
    pub reflective: bool,
}

fn default_branch_target() -> f64 {
    70.0
}

fn default_plateau_points() -> f64 {
    1.0
}

fn default_generator_budget() -> f64 {
    600.0
}

fn default_module_budget() -> f64 {
    8.0
}

/// The L3 generator's budget when no override names one: its entry points run as subprocesses.
const ENTRY_POINT_BUDGET_S: f64 = 60.0;

fn default_call_timeout() -> f64 {
    2.0
}

fn default_mutation_budget() -> f64 {
    90.0
}

fn default_max_mutants() -> usize {
    300
}

/// One search helper per core, up to four.
pub fn default_generator_workers() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().min(4))
}

/// One mutant worker per core, up to four: a worker's copy and build cost disk and memory.
pub fn default_mutation_workers() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().min(4))
}

impl TeamConfig {
    /// Every role the config names must exist in `registry` with the same prefix.
    pub fn check_roles(&self, registry: &crate::roles::Registry) -> Result<()> {
        for role in &self.roles {
            let spec = registry.get(&role.name).ok_or_else(|| Error::BadRole {
                path: self.source.clone(),
                role: role.name.clone(),
                problem: "no role file defines this role".into(),
            })?;
            if spec.prefix != role.prefix {
                return Err(Error::BadRole {
                    path: PathBuf::from(spec.source_label()),
                    role: role.name.clone(),
                    problem: format!(
                        "prefix {:?} differs from {:?} in {}",
                        spec.prefix,
                        role.prefix,
                        self.source.display()
                    ),
                });
            }
        }
        Ok(())
    }

    pub fn builtin() -> Result<Self> {
        Self::parse(BUILTIN_CONFIG, Path::new(BUILTIN_CONFIG_NAME))
    }

    pub fn load(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::io(format!("reading {}", path.display()), e))?;
        Self::parse(&text, path)
    }

    pub fn parse(text: &str, path: &Path) -> Result<Self> {
        // The error names where in the document the problem is (`pipelines.targeted.tasks[1]`).
        let de = &mut serde_json::Deserializer::from_str(text);
        let mut config: TeamConfig = serde_path_to_error::deserialize(de).map_err(|e| {
            let at = e.path().to_string();
            let inner = e.into_inner();
            if at == "." || at.is_empty() {
                Error::bad_file(path, format!("invalid team config: {inner}"))
            } else {
                Error::bad_file(path, format!("invalid team config at {at}: {inner}"))
            }
        })?;
        config.source = path.to_path_buf();
        config.validate()?;
        Ok(config)
    }

    pub fn role(&self, name: &str) -> Option<&RoleConfig> {
        self.roles.iter().find(|r| r.name == name)
    }

    pub fn pipeline(&self, mode: &str) -> Result<&PipelineSpec> {
        self.pipelines
            .get(mode)
            .ok_or_else(|| Error::unknown_pipeline(mode, self.pipelines.keys()))
    }

    pub fn coverage_target(&self, layer: &str) -> Option<f64> {
        self.coverage_targets.get(layer).copied()
    }

    /// The generator's budget for `modules` modules of `layer`: the per-module budget (the
    /// layer's own when set) times the modules, at least one module's, at most the cap.
    /// L3 runs the project's entry points rather than modules: without an override it keeps
    /// 60 s (under the cap).
    pub fn generator_budget(&self, layer: &str, modules: usize) -> f64 {
        let own = self.generator_layer_module_budget_s.get(layer).copied();
        if own.is_none() && layer.starts_with("L3") {
            return ENTRY_POINT_BUDGET_S.min(self.generator_budget_s);
        }
        let per_module = own.unwrap_or(self.generator_module_budget_s);
        (per_module * modules.max(1) as f64).min(self.generator_budget_s)
    }

    fn validate(&self) -> Result<()> {
        let path = &self.source;
        let bad = |problem: String| Error::bad_file(path, problem);
        if !(0.0..=1.0).contains(&self.pass_rate_target) {
            return Err(bad(format!(
                "pass_rate_target {} is not between 0 and 1",
                self.pass_rate_target
            )));
        }
        if self.max_attempts == 0 {
            return Err(bad("max_attempts must be at least 1".into()));
        }
        let mut names = HashSet::new();
        let mut prefixes = HashSet::new();
        for role in &self.roles {
            if !names.insert(role.name.as_str()) {
                return Err(bad(format!("role '{}' is defined twice", role.name)));
            }
            if let Some(prefix) = &role.prefix {
                if !prefixes.insert(prefix.as_str()) {
                    return Err(bad(format!(
                        "role '{}': prefix {prefix} is already used by another role",
                        role.name
                    )));
                }
            }
        }
        // A pipeline's roles are what run together (the coordinator with them); the config may
        // hold more roles than one pipeline uses (the fixer runs in test-fix only).
        for (name, pipeline) in &self.pipelines {
            let mut used: BTreeSet<&str> =
                pipeline.tasks.iter().map(|t| t.owner.as_str()).collect();
            used.insert("coordinator");
            if used.len() > self.max_roles {
                return Err(bad(format!(
                    "pipeline {name}: {} roles exceed max_roles {}",
                    used.len(),
                    self.max_roles
                )));
            }
        }
        for gc_role in [&self.gc.generator, &self.gc.critic] {
            if self.role(gc_role).is_none() {
                return Err(bad(format!("gc names unknown role '{gc_role}'")));
            }
        }
        for (mode, pipeline) in &self.pipelines {
            self.validate_pipeline(mode, pipeline)?;
        }
        Ok(())
    }

    fn validate_pipeline(&self, mode: &str, pipeline: &PipelineSpec) -> Result<()> {
        let task_error = |task: &str, problem: String| Error::BadTask {
            path: self.source.clone(),
            task: task.to_string(),
            problem: format!("pipeline {mode}: {problem}"),
        };
        for spec in &pipeline.tasks {
            let Some(role) = self.role(&spec.owner) else {
                continue; // reported with the task below by the graph validation
            };
            if let Some(prefix) = &role.prefix {
                if !spec.id.starts_with(&format!("{prefix}-")) {
                    return Err(task_error(
                        &spec.id,
                        format!(
                            "id does not start with {prefix}-, the prefix of role {}",
                            role.name
                        ),
                    ));
                }
            }
            if role.inner_loop == InnerLoop::Dynamic(DynamicMarker::Dynamic)
                && spec.inner_loop.is_none()
            {
                return Err(task_error(
                    &spec.id,
                    format!(
                        "role {} has a dynamic inner_loop, so the task must set inner_loop",
                        role.name
                    ),
                ));
            }
            if let Some(layer) = &spec.layer {
                if !self.coverage_targets.contains_key(layer) {
                    return Err(task_error(&spec.id, format!("unknown layer '{layer}'")));
                }
            }
        }
        let graph = TaskGraph::new(
            pipeline
                .tasks
                .iter()
                .map(|s| new_task(s, false, String::new(), ""))
                .collect(),
        );
        graph
            .validate(|owner| self.role(owner).is_some())
            .map_err(|e: GraphError| task_error(e.task(), e.to_string()))
    }

    /// The inner_loop flag of a registry task: the task's own setting, else the role's.
    pub fn inner_loop_of(&self, spec: &TaskSpec) -> bool {
        spec.inner_loop
            .unwrap_or_else(|| match self.role(&spec.owner) {
                Some(RoleConfig {
                    inner_loop: InnerLoop::Fixed(b),
                    ..
                }) => *b,
                _ => false,
            })
    }
}

/// A fresh pending task from a registry entry.
pub fn new_task(spec: &TaskSpec, inner_loop: bool, description: String, now: &str) -> Task {
    let mut meta = serde_json::Map::new();
    if let Some(step) = &spec.step {
        meta.insert(crate::tasks::meta::STEP.into(), serde_json::json!(step));
    }
    Task {
        meta,
        instance: spec.instance.clone(),
        layer: spec.layer.clone(),
        inner_loop,
        description,
        created_at: now.to_string(),
        ..Task::new(
            &spec.id,
            &spec.subject,
            &spec.owner,
            spec.blocked_by.clone(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seeds_own_role_files_pass_the_builtin_configs_check() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/roles/seed");
        let registry = crate::roles::Registry::load(Some(&dir)).unwrap();
        TeamConfig::builtin()
            .unwrap()
            .check_roles(&registry)
            .unwrap();
    }

    #[test]
    fn builtin_config_matches_the_seed() {
        let c = TeamConfig::builtin().unwrap();
        let ids = |m: &str| -> Vec<String> {
            c.pipeline(m)
                .unwrap()
                .tasks
                .iter()
                .map(|t| t.id.clone())
                .collect()
        };
        assert_eq!(
            ids("targeted"),
            ["STRATEGY-001", "TESTGEN-001", "TESTRUN-001"]
        );
        assert_eq!(ids("standard").len(), 6);
        assert_eq!(ids("comprehensive").len(), 8);
        assert_eq!(c.coverage_target("L1-unit"), Some(80.0));
        assert_eq!(c.generator_budget("L1-unit", 5), 40.0);
        assert_eq!(c.generator_budget("L1-unit", 0), 8.0);
        assert_eq!(c.generator_budget("L3-e2e", 3), 60.0);
        assert_eq!(c.generator_budget("L1-unit", 1000), 600.0);
        assert_eq!(c.max_gc_rounds, 3);
    }

    #[test]
    fn cycle_is_reported_with_file_and_task() {
        let mut v: serde_json::Value = serde_json::from_str(BUILTIN_CONFIG).unwrap();
        v["pipelines"]["targeted"]["tasks"][0]["blockedBy"] = serde_json::json!(["TESTRUN-001"]);
        let err = TeamConfig::parse(&v.to_string(), Path::new("x.json")).unwrap_err();
        let msg = err.to_string();
        assert!(msg.starts_with("x.json: task "), "{msg}");
        assert!(msg.contains("cycle"), "{msg}");
    }
}
