//! The JSON Schema of analysis/report.json, and a small structural validator for the subset of
//! JSON Schema it uses (`type`, `required`, `properties`, `items`, `enum`, `minimum`, `maximum`),
//! so the schema is checked without a schema crate.

use serde_json::Value;

/// Written as analysis/report.schema.json next to every report.json.
pub const REPORT_SCHEMA: &str = r##"{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$id": "https://team-testing.local/schemas/report.schema.json",
  "title": "team-testing quality report",
  "type": "object",
  "required": ["schema_version", "session_id", "quality_score", "band", "score", "layers",
               "defect_patterns", "gc_effectiveness", "coverage_gaps", "findings", "sandbox", "flaky_tests",
               "quarantined", "confidence", "trends", "recommendations", "missing", "runs"],
  "properties": {
    "schema_version": {"type": "integer", "enum": [1]},
    "session_id": {"type": "string"},
    "repo": {"type": ["string", "null"]},
    "created_at": {"type": ["string", "null"]},
    "quality_score": {"type": "number", "minimum": 0, "maximum": 100},
    "band": {"type": "string", "enum": ["good", "unverified", "needs improvement", "concerning", "not scored"]},
    "scored": {"type": "boolean"},
    "baseline": {
      "type": "object", "required": ["tests", "passed", "failing_tests", "coverage", "layers"],
      "properties": {
        "tests": {"type": "integer", "minimum": 0},
        "passed": {"type": "integer", "minimum": 0},
        "failing_tests": {"type": "array", "items": {"type": "string"}},
        "coverage": {"type": ["number", "null"]},
        "layers": {"type": "array", "items": {
          "type": "object", "required": ["layer", "before", "after", "new_tests"]
        }},
        "files": {"type": "array", "items": {
          "type": "object", "required": ["file", "before", "after"],
          "properties": {"file": {"type": "string"}, "before": {"type": ["number", "null"]},
                         "after": {"type": ["number", "null"]}}
        }}
      }
    },
    "fix_cycle": {
      "type": "object",
      "required": ["status", "iterations", "branch", "fixed_files"],
      "properties": {
        "status": {"type": "string", "enum": ["running", "success", "partial_success", "failure", "needs_agent", "nothing_to_fix"]},
        "iterations": {"type": "array", "items": {"type": "object", "required": ["iteration", "strategy", "pass_rate", "outcome"]}},
        "branch": {"type": "string"},
        "stuck_tests": {"type": "array", "items": {"type": "string"}},
        "fixed_files": {"type": "array", "items": {"type": "object", "required": ["path", "status"]}}
      }
    },
    "traceability": {
      "type": "object",
      "required": ["criteria_from", "summary", "criteria", "other_scenarios"],
      "properties": {
        "criteria_from": {"type": "string", "enum": ["requirements", "scenarios"]},
        "notes": {"type": "array", "items": {"type": "string"}},
        "summary": {
          "type": "object",
          "required": ["requirements", "criteria", "covered", "violated", "failing", "not_run", "no_scenario"],
          "properties": {
            "requirements": {"type": "integer", "minimum": 0}, "criteria": {"type": "integer", "minimum": 0},
            "covered": {"type": "integer", "minimum": 0}, "violated": {"type": "integer", "minimum": 0},
            "failing": {"type": "integer", "minimum": 0}, "not_run": {"type": "integer", "minimum": 0},
            "no_scenario": {"type": "integer", "minimum": 0}
          }
        },
        "criteria": {"type": "array", "items": {
          "type": "object",
          "required": ["requirement", "requirement_title", "criterion", "text", "verdict", "scenarios"],
          "properties": {
            "requirement": {"type": "string"}, "requirement_title": {"type": ["string", "null"]},
            "criterion": {"type": "string"}, "text": {"type": ["string", "null"]},
            "verdict": {"type": "string", "enum": ["covered", "violated", "failing", "not_run", "no_scenario"]},
            "scenarios": {"type": "array", "items": {
            "type": "object",
            "required": ["id", "name", "layer", "priority", "req_ref", "test_file", "status", "classification", "status_from"],
            "properties": {
              "id": {"type": "string"}, "name": {"type": "string"}, "layer": {"type": "string"},
              "priority": {"type": "string", "enum": ["critical", "high", "medium", "low"]},
              "req_ref": {"type": "string"}, "test_file": {"type": "string"},
              "status": {"type": "string", "enum": ["passed", "failed", "not_run"]},
              "classification": {"type": ["string", "null"]},
              "red_result": {"type": "string"},
              "status_from": {"type": ["string", "null"]},
              "note": {"type": "string"}
            }
          }}
          }
        }},
        "other_scenarios": {"type": "array", "items": {
            "type": "object",
            "required": ["id", "name", "layer", "priority", "req_ref", "test_file", "status", "classification", "status_from"],
            "properties": {
              "id": {"type": "string"}, "name": {"type": "string"}, "layer": {"type": "string"},
              "priority": {"type": "string", "enum": ["critical", "high", "medium", "low"]},
              "req_ref": {"type": "string"}, "test_file": {"type": "string"},
              "status": {"type": "string", "enum": ["passed", "failed", "not_run"]},
              "classification": {"type": ["string", "null"]},
              "red_result": {"type": "string"},
              "status_from": {"type": ["string", "null"]},
              "note": {"type": "string"}
            }
          }}
      }
    },
    "mutation": {
      "type": "object",
      "required": ["modules", "mutants", "no_coverage", "generated", "combined", "layers", "survivors"],
      "properties": {
        "modules": {"type": "array", "items": {"type": "string"}},
        "mutants": {"type": "integer", "minimum": 0},
        "no_coverage": {"type": "integer", "minimum": 0},
        "baseline": {"type": ["object", "null"], "required": ["tests", "killed", "score"]},
        "generated": {"type": "object", "required": ["tests", "killed", "score"],
          "properties": {"score": {"type": "number", "minimum": 0, "maximum": 100}}},
        "combined": {"type": "object", "required": ["tests", "killed", "score"],
          "properties": {"score": {"type": "number", "minimum": 0, "maximum": 100}}},
        "layers": {"type": "array", "items": {
          "type": "object",
          "required": ["layer", "before", "after", "combined_before", "combined_after", "dropped"]
        }},
        "survivors": {"type": "array", "items": {"type": "object", "required": ["location", "operator"]}}
      }
    },
    "score": {
      "type": "object",
      "required": ["weights", "coverage_achievement", "test_effectiveness", "defect_detection",
                   "gc_efficiency", "gc_rounds_used", "gc_budget", "failing_tests", "classified_failing_tests"],
      "properties": {
        "weights": {"type": "object", "required": ["coverage_achievement", "test_effectiveness", "defect_detection", "gc_efficiency"]},
        "coverage_achievement": {"type": "number", "minimum": 0, "maximum": 1},
        "test_effectiveness": {"type": "number", "minimum": 0, "maximum": 1},
        "defect_detection": {"type": "number", "minimum": 0, "maximum": 1},
        "gc_efficiency": {"type": "number", "minimum": 0, "maximum": 1},
        "gc_rounds_used": {"type": "integer", "minimum": 0},
        "gc_budget": {"type": "integer", "minimum": 0},
        "failing_tests": {"type": "integer", "minimum": 0},
        "classified_failing_tests": {"type": "integer", "minimum": 0}
      }
    },
    "layers": {"type": "array", "items": {
      "type": "object",
      "required": ["layer", "target", "gate", "final_pass_rate", "final_coverage", "gc_rounds_used", "history"],
      "properties": {
        "layer": {"type": "string"},
        "target": {"type": ["number", "null"]},
        "gate": {"type": "string", "enum": ["Met", "Below", "NotApplicable"]},
        "not_applicable": {"type": "string"},
        "loop_stopped": {"type": "string"},
        "final_pass_rate": {"type": ["number", "null"]},
        "final_coverage": {"type": ["number", "null"]},
        "gc_rounds_used": {"type": "integer", "minimum": 0},
        "history": {"type": "array", "items": {
          "type": "object",
          "required": ["task_id", "round", "status", "pass_rate", "coverage"],
          "properties": {
            "task_id": {"type": "string"}, "round": {"type": "integer"}, "status": {"type": "string"},
            "pass_rate": {"type": ["number", "null"]}, "coverage": {"type": ["number", "null"]},
            "run": {"type": ["string", "null"]}
          }
        }}
      }
    }},
    "defect_patterns": {"type": "array", "items": {
      "type": "object", "required": ["kind", "count", "severity", "tests", "files"],
      "properties": {
        "kind": {"type": "string"}, "count": {"type": "integer", "minimum": 1},
        "severity": {"type": "string", "enum": ["HIGH", "MEDIUM", "LOW"]},
        "tests": {"type": "array", "items": {"type": "string"}},
        "files": {"type": "array", "items": {"type": "string"}}
      }
    }},
    "gc_effectiveness": {"type": "array", "items": {
      "type": "object", "required": ["layer", "rounds_used", "coverage_gained", "gain_per_round", "rating"],
      "properties": {
        "layer": {"type": "string"}, "rounds_used": {"type": "integer", "minimum": 0},
        "coverage_gained": {"type": ["number", "null"]}, "gain_per_round": {"type": ["number", "null"]},
        "rating": {"type": "string", "enum": ["HIGH", "MEDIUM", "LOW", "n/a"]}
      }
    }},
    "coverage_gaps": {"type": "array", "items": {
      "type": "object", "required": ["layer", "module", "line_percent", "target", "gap", "uncovered", "recommendation"],
      "properties": {
        "layer": {"type": "string"}, "module": {"type": "string"}, "line_percent": {"type": "number"},
        "target": {"type": ["number", "null"]}, "gap": {"type": "number", "minimum": 0},
        "uncovered": {"type": "string"}, "recommendation": {"type": "string"}
      }
    }},
    "findings": {
      "type": "object", "required": ["code_defects", "contract_findings"],
      "properties": {
        "code_defects": {"type": "array", "items": {
          "type": "object", "required": ["test", "layer", "task_id", "evidence"],
          "properties": {"test": {"type": "string"}, "layer": {"type": "string"}, "task_id": {"type": "string"},
                         "evidence": {"type": ["object", "null"]}}
        }},
        "contract_findings": {"type": "array", "items": {"type": "object"}},
        "side_effects": {"type": "array", "items": {"type": "object", "required": ["module", "function", "call", "actual"]}},
        "skipped_examples": {"type": "array", "items": {"type": "object", "required": ["module", "function", "call", "actual"]}},
        "load_errors": {"type": "array", "items": {
          "type": "object", "required": ["file", "layer", "task_id", "classification", "reason"],
          "properties": {"file": {"type": "string"}, "layer": {"type": "string"}, "task_id": {"type": "string"},
                         "classification": {"type": ["string", "null"], "enum": ["test_defect", "code_defect", "env_issue", "sandbox_denied", null]},
                         "reason": {"type": "string"}, "location": {"type": ["string", "null"]},
                         "install": {"type": ["string", "null"]}}
        }}
      }
    },
    "sandbox": {
      "type": "object", "required": ["protections", "blocked"],
      "properties": {
        "blocked": {"type": "array", "items": {"type": "object", "required": ["module", "function", "call", "actual", "task_id"]}},
        "watch": {"type": "array", "items": {"type": "object", "required": ["layer", "checked"]}}
      }
    },
    "added_roles": {"type": "array", "items": {"type": "object", "required": ["role", "task_id", "status", "summary", "reason", "artifacts"]}},
    "flaky_tests": {"type": "array", "items": {"type": "object", "required": ["test", "layer", "task_id"]}},
    "quarantined": {"type": "array", "items": {"type": "object", "required": ["test", "reason", "task_id"]}},
    "confidence": {
      "type": "object",
      "required": ["scenario_coverage", "test_quality", "diagnostic_accuracy", "strategy_effectiveness",
                   "infrastructure_fitness", "overall"],
      "properties": {
        "scenario_coverage": {"type": "number", "minimum": 0, "maximum": 1},
        "test_quality": {"type": "number", "minimum": 0, "maximum": 1},
        "diagnostic_accuracy": {"type": "number", "minimum": 0, "maximum": 1},
        "strategy_effectiveness": {"type": "number", "minimum": 0, "maximum": 1},
        "infrastructure_fitness": {"type": "number", "minimum": 0, "maximum": 1},
        "overall": {"type": "number", "minimum": 0, "maximum": 1}
      }
    },
    "trends": {"type": "object", "required": ["thresholds", "previous", "coverage", "score", "defect_patterns"]},
    "recommendations": {"type": "array", "items": {"type": "string"}},
    "missing": {"type": "array", "items": {"type": "string"}},
    "runs": {"type": "array", "items": {
      "type": "object", "required": ["file", "task_id", "layer", "round", "total", "pass_rate", "coverage"]
    }}
  }
}
"##;

fn type_ok(name: &str, v: &Value) -> bool {
    match name {
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "number" => v.is_number(),
        "integer" => v.is_i64() || v.is_u64(),
        "boolean" => v.is_boolean(),
        "null" => v.is_null(),
        _ => true,
    }
}

/// Every way `value` breaks `schema` (the subset above), each with its JSON pointer; empty = valid.
pub fn validate(schema: &Value, value: &Value) -> Vec<String> {
    let mut errors = Vec::new();
    check(schema, value, "", &mut errors);
    errors
}

fn check(schema: &Value, v: &Value, at: &str, errors: &mut Vec<String>) {
    let here = if at.is_empty() { "/" } else { at };
    if let Some(t) = schema.get("type") {
        let ok = match t {
            Value::String(s) => type_ok(s, v),
            Value::Array(a) => a.iter().filter_map(Value::as_str).any(|s| type_ok(s, v)),
            _ => true,
        };
        if !ok {
            errors.push(format!("{here}: expected type {t}, found {v}"));
            return;
        }
    }
    if let Some(allowed) = schema.get("enum").and_then(Value::as_array) {
        if !allowed.contains(v) {
            errors.push(format!(
                "{here}: {v} is not one of {}",
                Value::from(allowed.clone())
            ));
        }
    }
    if let (Some(min), Some(x)) = (schema.get("minimum").and_then(Value::as_f64), v.as_f64()) {
        if x < min {
            errors.push(format!("{here}: {x} < minimum {min}"));
        }
    }
    if let (Some(max), Some(x)) = (schema.get("maximum").and_then(Value::as_f64), v.as_f64()) {
        if x > max {
            errors.push(format!("{here}: {x} > maximum {max}"));
        }
    }
    if let Some(obj) = v.as_object() {
        for key in schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            if !obj.contains_key(key) {
                errors.push(format!("{at}/{key}: required key is missing"));
            }
        }
        if let Some(props) = schema.get("properties").and_then(Value::as_object) {
            for (key, sub) in props {
                if let Some(child) = obj.get(key) {
                    check(sub, child, &format!("{at}/{key}"), errors);
                }
            }
        }
    }
    if let (Some(items), Some(arr)) = (schema.get("items"), v.as_array()) {
        for (i, child) in arr.iter().enumerate() {
            check(items, child, &format!("{at}/{i}"), errors);
        }
    }
}
