//! Run controls that bend the team config for one session: GC rounds per layer, a coverage
//! preset and per-layer targets. Kept in session.json, so a resume applies them again.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::config::TeamConfig;
use crate::error::Error;

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
}

impl RunControls {
    /// Checks the command-line values against `config`; every error names the value.
    pub fn from_args(
        max_rounds: Option<u32>,
        preset: Option<&str>,
        targets: &[String],
        config: &TeamConfig,
    ) -> Result<Self, Error> {
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
        })
    }

    /// The config as this session runs it.
    pub fn apply(&self, config: &mut TeamConfig) {
        if let Some(n) = self.max_rounds {
            config.max_gc_rounds = n;
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

/// The config's layer name for `L1` or `L1-unit` (case-insensitive).
fn layer_key(config: &TeamConfig, layer: &str) -> Option<String> {
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
        let c =
            RunControls::from_args(Some(1), Some("strict"), &["l1=95".into()], &config).unwrap();
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
            RunControls::from_args(None, preset, &[t.to_string()], &config)
                .unwrap_err()
                .to_string()
        };
        assert!(err(None, "L9=50").contains("no layer \"L9\""));
        assert!(err(None, "L1=150").contains("not a percentage"));
        assert!(err(None, "L1").contains("expected LAYER=PERCENT"));
        assert!(err(Some("lax"), "L1=50").contains("--coverage-preset lax"));
    }
}
