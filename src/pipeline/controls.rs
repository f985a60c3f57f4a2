//! Run controls that bend the team config for one session: GC rounds per layer, a coverage
//! preset and per-layer targets. Kept in session.json, so a resume applies them again.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::config::TeamConfig;
use crate::error::Error;
use crate::tasks::Task;

/// `--strategy` values: the seed's three and the reflective one.
pub const STRATEGIES: [&str; 4] = ["conservative", "aggressive", "surgical", REFLECTIVE];
pub const REFLECTIVE: &str = "reflective";

/// `--coverage-preset NAME`: L1/L2/L3 line-coverage targets in percent.
pub const PRESETS: [(&str, [f64; 3]); 3] = [
    ("standard", [80.0, 60.0, 40.0]),
    ("strict", [90.0, 75.0, 60.0]),
    ("minimum", [60.0, 40.0, 20.0]),
];

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RunControls {
    /// `--max-rounds N`: GC rounds per layer.
    pub max_rounds: Option<u32>,
    /// `--coverage-preset NAME`.
    pub coverage_preset: Option<String>,
    /// `--target L1=85`, by the config's layer name (`L1-unit`), applied after the preset.
    pub targets: BTreeMap<String, f64>,
    /// `--layer L1`: the one layer this session tests (the config's name for it).
    pub layer: Option<String>,
    /// `-c/--concurrency N`: most tasks in progress at once (None: every ready task).
    pub concurrency: Option<usize>,
    /// `--max-roles N`: roles in use at once, coordinator included.
    pub max_roles: Option<usize>,
    /// `--max-iterations N`: iterations of the test-fix loop (default 10).
    pub max_iterations: Option<u32>,
    /// `--spec-dir DIR`: where the requirement files (`REQ-*.md`) are (default: anywhere in the
    /// repository).
    pub spec_dir: Option<std::path::PathBuf>,
    /// `--strategy NAME`: the GC rounds' starting strategy (conservative, aggressive, surgical)
    /// or `reflective` (a reflection each iteration decides the next; see team::shared::reflect).
    pub strategy: Option<String>,
    /// `--max-mutants N`: mutants the analyst samples at most (a faster, rougher score).
    pub max_mutants: Option<usize>,
    /// `--no-cache`: every module is searched, none reused from earlier sessions' tests.
    pub no_cache: bool,
}

impl RunControls {
    /// Checks the command-line values against `config`; every error names the value.
    pub fn from_args(
        max_rounds: Option<u32>,
        preset: Option<&str>,
        targets: &[String],
        layer: Option<&str>,
        config: &TeamConfig,
    ) -> Result<Self, Error> {
        let known = || {
            config
                .coverage_targets
                .keys()
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        };
        let layer = layer
            .map(|l| {
                layer_key(config, l.trim()).ok_or_else(|| {
                    Error::Usage(format!("--layer {l}: no such layer (layers: {})", known()))
                })
            })
            .transpose()?;
        if let Some(p) = preset {
            if !PRESETS.iter().any(|(name, _)| *name == p) {
                return Err(Error::Usage(format!(
                    "--coverage-preset {p}: expected standard, strict or minimum"
                )));
            }
        }
        let mut parsed = BTreeMap::new();
        for t in targets {
            let (layer, pct) = t.split_once('=').ok_or_else(|| {
                Error::Usage(format!("--target {t}: expected LAYER=PERCENT, e.g. L1=85"))
            })?;
            let pct: f64 = pct
                .trim()
                .parse()
                .ok()
                .filter(|v: &f64| (0.0..=100.0).contains(v))
                .ok_or_else(|| {
                    Error::Usage(format!(
                        "--target {t}: {pct:?} is not a percentage from 0 to 100"
                    ))
                })?;
            let key = layer_key(config, layer.trim()).ok_or_else(|| {
                let known: Vec<&str> = config.coverage_targets.keys().map(String::as_str).collect();
                Error::Usage(format!(
                    "--target {t}: no layer {layer:?} (layers: {})",
                    known.join(", ")
                ))
            })?;
            parsed.insert(key, pct);
        }
        Ok(RunControls {
            max_rounds,
            coverage_preset: preset.map(str::to_string),
            targets: parsed,
            layer,
            concurrency: None,
            max_roles: None,
            max_iterations: None,
            spec_dir: None,
            strategy: None,
            max_mutants: None,
            no_cache: false,
        })
    }

    /// The config as this session runs it.
    pub fn apply(&self, config: &mut TeamConfig) {
        config.reflective = self.strategy.as_deref() == Some(REFLECTIVE);
        if let Some(n) = self.max_rounds {
            config.max_gc_rounds = n;
        }
        if let Some(n) = self.max_roles {
            config.max_roles = n;
        }
        if let Some(n) = self.max_mutants {
            config.mutation_max_mutants = n;
        }
        if let Some((_, pcts)) = PRESETS
            .iter()
            .find(|(name, _)| Some(*name) == self.coverage_preset.as_deref())
        {
            for (code, pct) in ["L1", "L2", "L3"].iter().zip(pcts) {
                if let Some(key) = layer_key(config, code) {
                    config.coverage_targets.insert(key, *pct);
                }
            }
        }
        for (key, pct) in &self.targets {
            config.coverage_targets.insert(key.clone(), *pct);
        }
    }
}

/// The pipeline's tasks without those of other layers than `layer`; a task that waited on a
/// removed one waits on what that one waited on.
pub fn restrict_to_layer(tasks: Vec<Task>, layer: &str) -> Vec<Task> {
    let removed: BTreeMap<String, Vec<String>> = tasks
        .iter()
        .filter(|t| t.layer.as_deref().is_some_and(|l| l != layer))
        .map(|t| (t.id.clone(), t.blocked_by.clone()))
        .collect();
    let resolve = |id: &String| -> Vec<String> {
        let mut out = Vec::new();
        let mut stack = vec![id.clone()];
        let mut seen = std::collections::BTreeSet::new();
        while let Some(i) = stack.pop() {
            if !seen.insert(i.clone()) {
                continue;
            }
            match removed.get(&i) {
                Some(deps) => stack.extend(deps.iter().cloned()),
                None => out.push(i),
            }
        }
        out
    };
    tasks
        .into_iter()
        .filter(|t| !removed.contains_key(&t.id))
        .map(|mut t| {
            let mut deps: Vec<String> = Vec::new();
            for d in t.blocked_by.iter().flat_map(resolve) {
                if !deps.contains(&d) {
                    deps.push(d);
                }
            }
            t.blocked_by = deps;
            t
        })
        .collect()
}

/// The config's layer name for `L1` or `L1-unit` (case-insensitive).
pub fn layer_key(config: &TeamConfig, layer: &str) -> Option<String> {
    let want = layer.to_ascii_lowercase();
    config.coverage_targets.keys().find_map(|k| {
        let lower = k.to_ascii_lowercase();
        (lower == want || lower.split('-').next() == Some(want.as_str())).then(|| k.clone())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_preset_then_a_target_then_the_rounds_shape_the_config() {
        let mut config = TeamConfig::builtin().unwrap();
        let c = RunControls::from_args(Some(1), Some("strict"), &["l1=95".into()], None, &config)
            .unwrap();
        c.apply(&mut config);
        assert_eq!(config.max_gc_rounds, 1);
        assert_eq!(config.coverage_target("L1-unit"), Some(95.0));
        assert_eq!(config.coverage_target("L2-integration"), Some(75.0));
        assert_eq!(config.coverage_target("L3-e2e"), Some(60.0));
    }

    #[test]
    fn bad_values_are_refused_naming_them() {
        let config = TeamConfig::builtin().unwrap();
        let err = |preset: Option<&str>, t: &str| {
            RunControls::from_args(None, preset, &[t.to_string()], None, &config)
                .unwrap_err()
                .to_string()
        };
        assert!(err(None, "L9=50").contains("no layer \"L9\""));
        assert!(err(None, "L1=150").contains("not a percentage"));
        assert!(err(None, "L1").contains("expected LAYER=PERCENT"));
        assert!(err(Some("lax"), "L1=50").contains("--coverage-preset lax"));
        let layer = RunControls::from_args(None, None, &[], Some("L7"), &config).unwrap_err();
        assert!(layer.to_string().contains("--layer L7: no such layer"));
    }

    #[test]
    fn restricting_to_one_layer_rewires_around_the_others() {
        let t = |id: &str, layer: Option<&str>, deps: &[&str]| Task {
            layer: layer.map(str::to_string),
            ..Task::new(id, "s", "o", deps.iter().map(|d| d.to_string()).collect())
        };
        let tasks = vec![
            t("STRATEGY-001", None, &[]),
            t("TESTGEN-001", Some("L1-unit"), &["STRATEGY-001"]),
            t("TESTRUN-001", Some("L1-unit"), &["TESTGEN-001"]),
            t("TESTGEN-002", Some("L2-integration"), &["TESTRUN-001"]),
            t("TESTRUN-002", Some("L2-integration"), &["TESTGEN-002"]),
            t("TESTANA-001", None, &["TESTRUN-002"]),
        ];
        let kept = restrict_to_layer(tasks, "L2-integration");
        let deps: Vec<(String, Vec<String>)> = kept
            .iter()
            .map(|t| (t.id.clone(), t.blocked_by.clone()))
            .collect();
        assert_eq!(
            deps,
            vec![
                ("STRATEGY-001".into(), vec![]),
                ("TESTGEN-002".into(), vec!["STRATEGY-001".into()]),
                ("TESTRUN-002".into(), vec!["TESTGEN-002".into()]),
                ("TESTANA-001".into(), vec!["TESTRUN-002".into()]),
            ]
        );
    }
}
