//! The report's files: report.json, results.csv and issues.jsonl from a [`Report`] (the
//! Markdown is `markdown.rs`, the HTML page `html/`), [`write`] for the analyst and [`render`] for
//! the `report` command.

use std::path::Path;

use serde_json::{json, Value};

use super::markdown::markdown;
use super::markdown::traceability_document as document;
use super::model::Report;
use super::model::TRACEABILITY_FILE;
use super::schema::REPORT_SCHEMA;
use crate::pipeline::config::TeamConfig;
use crate::session::SessionDir;
use crate::util::{atomic_write, atomic_write_json, mkdirs};

/// Why a report could not be rendered or written.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("unknown report format {0:?} (md, json, csv, html, sarif or pr)")]
    UnknownFormat(String),
    #[error("writing the CSV rows: {0}")]
    Csv(#[from] csv::Error),
    #[error("writing the CSV rows: {0}")]
    CsvFlush(std::io::Error),
    #[error("serializing the report: {0}")]
    Json(#[from] serde_json::Error),
    #[error(transparent)]
    File(#[from] crate::util::FileError),
}

/// The columns of analysis/results.csv, in order: the test's, then its scenario's (the seed's
/// columns of scenarios.csv; empty for a test of no scenario).
pub const CSV_HEADER: [&str; 14] = [
    "id",
    "layer",
    "file",
    "status",
    "classification",
    "criticality",
    "duration",
    "round",
    "name",
    "priority",
    "category",
    "target_file",
    "red_result",
    "findings",
];

/// The files [`write`] always produces, relative to the session folder (with a traceability
/// section, [`super::TRACEABILITY_FILE`] too).
pub const ARTIFACTS: [&str; 7] = [
    "analysis/quality-report.md",
    "analysis/report.html",
    "analysis/report.json",
    "analysis/report.schema.json",
    "analysis/results.csv",
    "analysis/issues.jsonl",
    "analysis/report.sarif",
];

impl Report {
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// One row per test of every run, in the column order of [`CSV_HEADER`].
    pub fn csv(&self) -> Result<String, ReportError> {
        let mut w = csv::Writer::from_writer(Vec::new());
        w.write_record(CSV_HEADER)?;
        for row in &self.rows {
            w.write_record(row.cells())?;
        }
        let bytes = w
            .into_inner()
            .map_err(|e| ReportError::CsvFlush(e.into_error()))?;
        // Written from Strings: always UTF-8.
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// One JSON object a line per code defect.
    pub fn issues_jsonl(&self) -> String {
        let mut out = String::new();
        for d in &self.findings.code_defects {
            let error = d.evidence["error"].as_str().unwrap_or("code defect");
            let location = d.evidence["location"].as_str();
            let title = match location {
                Some(l) => format!("{error} at {l} (found by {})", d.test),
                None => format!("{error} (found by {})", d.test),
            };
            let v = json!({"title": title, "test": d.test, "file": d.file, "location": location,
                "evidence": d.evidence, "layer": d.layer, "criticality": d.criticality,
                "task_id": d.task_id, "round": d.round});
            out.push_str(&v.to_string());
            out.push('\n');
        }
        out
    }

    /// The outcome data the analyst reports (merged into meta.json under its instance).
    pub fn outcome_data(&self) -> Value {
        let mut data = json!({
            "quality_score": self.quality_score, "band": self.band,
            "coverage_gaps": self.coverage_gaps,
            "top_defect_patterns": self.defect_patterns.iter().take(5).collect::<Vec<_>>(),
            "gc_effectiveness": self.gc_effectiveness,
            "recommendations": self.recommendations,
            "confidence": self.confidence,
            "missing": self.missing,
        });
        if let Some(t) = &self.traceability {
            data["traceability"] = json!(t.summary);
        }
        data
    }
}

/// Writes every file of [`ARTIFACTS`] under `<session>/analysis/`, and analysis/traceability.md
/// when the report has the section (an older one is removed when it has not).
pub fn write(session: &SessionDir, report: &Report) -> Result<Vec<String>, ReportError> {
    let dir = session.root.join("analysis");
    mkdirs(&dir)?;
    let put = |name: &str, bytes: &[u8]| atomic_write(&dir.join(name), bytes);
    put("quality-report.md", markdown(report).as_bytes())?;
    put("report.html", super::html::html(session, report).as_bytes())?;
    atomic_write_json(&dir.join("report.json"), &report.to_json())?;
    put("report.schema.json", REPORT_SCHEMA.as_bytes())?;
    put("results.csv", report.csv()?.as_bytes())?;
    put("issues.jsonl", report.issues_jsonl().as_bytes())?;
    put(
        "report.sarif",
        (serde_json::to_string_pretty(&super::sarif(report, &session.root))? + "\n").as_bytes(),
    )?;
    let mut written: Vec<String> = ARTIFACTS.iter().map(|s| s.to_string()).collect();
    let trace = session.root.join(TRACEABILITY_FILE);
    match &report.traceability {
        Some(t) => {
            atomic_write(&trace, document(t, &report.session_id).as_bytes())?;
            written.push(TRACEABILITY_FILE.to_string());
        }
        // Best effort: a stale file is only a stale file.
        None => {
            let _ = std::fs::remove_file(&trace);
        }
    }
    Ok(written)
}

fn read_if(path: &Path) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .filter(|t| !t.trim().is_empty())
}

/// The report of `session` in `format` (md, json, csv, html, sarif or pr): the file the analyst wrote when there
/// is one, else built fresh from the session (nothing is written).
pub fn render(
    session: &SessionDir,
    config: &TeamConfig,
    format: &str,
) -> Result<String, ReportError> {
    // Made for a pull request from the session as it is: never a file of the analyst's.
    if format == "pr" {
        return Ok(super::pr_summary(
            &super::build(session, config),
            &session.root,
        ));
    }
    let file = match format {
        "md" | "markdown" => "quality-report.md",
        "json" => "report.json",
        "csv" => "results.csv",
        "html" => "report.html",
        "sarif" => "report.sarif",
        other => return Err(ReportError::UnknownFormat(other.to_string())),
    };
    if let Some(text) = read_if(&session.root.join("analysis").join(file)) {
        return Ok(text);
    }
    let report = super::build(session, config);
    match file {
        "quality-report.md" => Ok(markdown(&report)),
        "report.json" => Ok(serde_json::to_string_pretty(&report.to_json())? + "\n"),
        "report.html" => Ok(super::html::html(session, &report)),
        "report.sarif" => {
            Ok(serde_json::to_string_pretty(&super::sarif(&report, &session.root))? + "\n")
        }
        _ => report.csv(),
    }
}
