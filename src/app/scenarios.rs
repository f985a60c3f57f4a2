//! Scenario planning when a session is made (the seed's S_SOURCE and S_INFRA): the route (spec
//! from `REQ-*.md`, gap from an earlier session's coverage, code from the module boundaries),
//! the scenarios of `scenarios.csv` with regression scenarios from earlier code defects, and the
//! check of a plan the user edited before `resume`.

use std::collections::BTreeMap;
use std::path::Path;

use crate::artifacts::{CoverageRecord, RecordedStatus};
use crate::error::{Error, Result};
use crate::pipeline::scope::ChangeScope;
use crate::scenario::build::{self, Boundary, BoundaryKind, Gap};
use crate::scenario::plan::{self, Priority, Scenario};
use crate::scenario::req::{self, Criterion, Requirement};
use crate::scenario::route::{self, Route, RouteInput};
use crate::session::SessionDir;
use crate::testing::classify::Classification;

/// The plan made for a new session.
#[derive(Debug)]
pub struct Planned {
    pub route: Route,
    pub why: String,
    pub rows: Vec<Scenario>,
    /// What to say of an earlier session of the repository that is still active or paused (the
    /// seed's resume route is `resume` on it), with the command that resumes it.
    pub active: Option<String>,
}

/// Plans the scenarios of a new session of `repo`. `layers` are the pipeline's layer codes
/// (`L1`, `L2`): a scenario of another layer moves to the nearest one the pipeline has, so
/// every criterion keeps a test. A malformed requirement file is an error naming it and the line.
pub fn plan(
    repo: &Path,
    sessions_root: &Path,
    spec_dir: Option<&Path>,
    scope: &ChangeScope,
    layers: &[String],
) -> Result<Planned> {
    let reqs = req::load_dir(repo, spec_dir).map_err(|e| {
        let at = format!("{}:{}: ", e.path().display(), e.line());
        let text = e.to_string();
        let problem = text.strip_prefix(&at).unwrap_or(&text);
        Error::BadFile {
            path: e.path().to_path_buf(),
            // Line 0: the file as a whole (unreadable, a link).
            problem: match e.line() {
                0 => problem.to_string(),
                line => format!("line {line}: {problem}"),
            },
        }
    })?;
    let previous = earlier_sessions(repo, sessions_root);
    // The newest earlier session that measured gaps (a dry run measured nothing).
    let (gaps, gap_source) = previous
        .iter()
        .map(|s| (gaps_of(s, repo), s))
        .find(|(g, _)| !g.is_empty())
        .map(|(g, s)| {
            let n = g.len();
            (g, Some((s.id.clone(), n)))
        })
        .unwrap_or_default();
    let (route, why) = route::detect(&RouteInput {
        active_session: None,
        rerun_requested: false,
        previous_failures: 0,
        requirements: &reqs,
        previous_gaps: gap_source.as_ref().map(|(id, n)| (id.as_str(), *n)),
    });
    let mut rows = match route {
        Route::Spec => {
            let defs = definitions(repo);
            build::from_requirements(&reqs, &|c: &Criterion| locate(c, &defs))
        }
        Route::Gap => build::from_gaps(&gaps),
        _ => build::from_code(&boundaries(repo, scope)),
    };
    rows.extend(build::regression(&earlier_defects(&previous)));
    rows.extend(build::from_localisation(&earlier_suspects(&previous)));
    let hints = infrastructure_hints(repo);
    for row in &mut rows {
        row.layer = nearest_layer(&row.layer, layers);
        row.infrastructure_hints = hints.clone();
    }
    // What the routes built from earlier sessions may name files gone since, or locations in a
    // session's own tests: a row the plan check would refuse is left out here.
    let codes: Vec<&str> = ["L1", "L2", "L3"].to_vec();
    rows.retain(|r| plan::validate(std::slice::from_ref(r), repo, &codes).is_ok());
    build::renumber(&mut rows);
    let active = previous
        .iter()
        .find(|s| {
            s.load_state().is_ok_and(|st| {
                matches!(
                    st.status,
                    crate::session::SessionStatus::Active | crate::session::SessionStatus::Paused
                )
            })
        })
        .map(|s| {
            format!(
                "session {} of this repository is still active or paused: {} continues it (the resume route); this run plans a new session",
                s.id,
                crate::hint::quoted(s, "resume", &[])
            )
        });
    Ok(Planned {
        route,
        why,
        rows,
        active,
    })
}

/// Records the route a command took on an existing plan (`resume`: the session goes on;
/// `rerun`: only what failed runs again), with why, where the plan gate and `status` read it.
pub fn note_route(session: &SessionDir, route: Route, why: &str) -> Result<()> {
    if !session.root.join(plan::FILE).is_file() {
        return Ok(());
    }
    let path = session.analysis_json();
    let mut analysis: serde_json::Value = crate::util::read_json(&path).unwrap_or_default();
    let previous = analysis["scenario_plan"]["route"]
        .as_str()
        .unwrap_or("-")
        .to_string();
    analysis["scenario_plan"]["route"] = serde_json::json!(route.as_str());
    analysis["scenario_plan"]["why"] =
        serde_json::json!(format!("{why} (planned by the {previous} route)"));
    crate::util::atomic_write_json(&path, &analysis)?;
    Ok(())
}

/// The failed or blocked scenarios of a plan, by id.
pub fn failed_scenarios(session: &SessionDir) -> Vec<String> {
    plan::read_csv(&session.root.join(plan::FILE))
        .map(|rows| {
            rows.into_iter()
                .filter(|r| r.status == "failed" || r.status == "blocked")
                .map(|r| r.id)
                .collect()
        })
        .unwrap_or_default()
}

/// Writes the plan into the session.
pub fn write(session: &SessionDir, planned: &Planned) -> Result<()> {
    let path = session.root.join(plan::FILE);
    plan::write_csv(&path, &planned.rows).map_err(|e| Error::BadFile {
        path,
        problem: e.to_string(),
    })
}

/// The session's plan, checked: a hand edit with an unknown layer, a duplicate id or a missing
/// target file is an error naming each row (the session is left as it is). None when the
/// session has no plan.
pub fn load(session: &SessionDir, repo: &Path) -> Result<Option<Vec<Scenario>>> {
    let path = session.root.join(plan::FILE);
    // The type first, without following or opening anything: a FIFO must not block the read,
    // and a folder or a link where the plan was is a plan the user lost, not a session without
    // one.
    match std::fs::symlink_metadata(&path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(format!("reading {}", path.display()), e)),
        Ok(meta) if !meta.file_type().is_file() => {
            let problem = format!(
                "is {}, not a regular file: put the plan back as a file (or remove it to run without one)",
                file_kind(&meta.file_type())
            );
            return Err(Error::BadFile { path, problem });
        }
        Ok(_) => {}
    }
    // A hand-edited test_file naming the generator's own file (`test_calc.py`) would have the
    // scenario's tests replace the generator's: refused, naming the row.
    let searched = crate::team::search_files(session, repo);
    let clash = |row: &Scenario| {
        let name = crate::team::scenario_own_file(row)?;
        let what = searched.get(&name)?;
        let suggested = build::TestNaming::Python.path(&row.layer, &row.id, &row.name);
        Some(plan::Problem::GeneratorFile {
            path: row.test_file.trim().to_string(),
            what: what.clone(),
            suggested,
        })
    };
    plan::load_checked(&path, repo, &["L1", "L2", "L3"], clash)
        .map(Some)
        .map_err(|e| Error::BadFile {
            path,
            problem: e.to_string(),
        })
}

/// What a path that is not a regular file is, in words.
fn file_kind(kind: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if kind.is_dir() {
        "a folder"
    } else if kind.is_symlink() {
        "a symbolic link"
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_block_device() || kind.is_char_device() {
        "a device"
    } else {
        "something else"
    }
}

/// `L2` when the pipeline has it, else the nearest layer it has (lower first).
fn nearest_layer(layer: &str, layers: &[String]) -> String {
    if layers.iter().any(|l| l == layer) || layers.is_empty() {
        return layer.to_string();
    }
    let n: i32 = layer.trim_start_matches('L').parse().unwrap_or(1);
    layers
        .iter()
        .min_by_key(|l| {
            let m: i32 = l.trim_start_matches('L').parse().unwrap_or(1);
            ((m - n).abs(), m)
        })
        .cloned()
        .unwrap_or_else(|| layer.to_string())
}

/// Earlier sessions of the same repository, the newest first.
fn earlier_sessions(repo: &Path, root: &Path) -> Vec<SessionDir> {
    let repo = repo.canonicalize().unwrap_or_else(|_| repo.to_path_buf());
    let mut found: Vec<(String, SessionDir)> = crate::session::list_all(root)
        .into_iter()
        .filter_map(|s| {
            let state = s.load_state().ok()?;
            let same = state.repo.canonicalize().unwrap_or(state.repo) == repo;
            same.then_some((state.created_at, s))
        })
        .collect();
    found.sort_by(|a, b| b.0.cmp(&a.0));
    found.into_iter().map(|(_, s)| s).collect()
}

/// A function's uncovered line ranges and its lines with a branch never taken.
type Uncovered = (Vec<(u32, u32)>, Vec<String>);

/// The uncovered ranges of a session's last coverage record of each layer, per function.
fn gaps_of(session: &SessionDir, repo: &Path) -> Vec<Gap> {
    let results = crate::artifacts::runs(&session.root);
    let mut missing: BTreeMap<String, Vec<u32>> = BTreeMap::new();
    let mut partial: BTreeMap<String, Vec<u32>> = BTreeMap::new();
    for layer in crate::session::LAYER_DIRS {
        let Some(run) = results.of_layer(layer).last() else {
            continue;
        };
        let Some(record) = run
            .coverage_file()
            .and_then(|rel| crate::util::read_json::<CoverageRecord>(&session.root.join(rel)).ok())
        else {
            continue;
        };
        for f in record.files {
            partial
                .entry(f.path.clone())
                .or_default()
                .extend(f.partial_lines.iter().copied());
            // Missing in every layer: a line one layer covers is no gap.
            let entry = missing
                .entry(f.path.clone())
                .or_insert(f.missing_lines.clone());
            entry.retain(|l| f.missing_lines.contains(l));
        }
    }
    let mut gaps = Vec::new();
    for (file, lines) in missing {
        let source = std::fs::read_to_string(repo.join(&file)).unwrap_or_default();
        let mut per_function: BTreeMap<Option<String>, Uncovered> = BTreeMap::new();
        for line in lines {
            let function = enclosing_def(&source, line);
            let (ranges, _) = per_function.entry(function).or_default();
            match ranges.last_mut() {
                Some(last) if last.1 + 1 == line => last.1 = line,
                _ => ranges.push((line, line)),
            }
        }
        // A line that ran with a branch never taken is a branch gap.
        let mut branch_lines = partial.get(&file).cloned().unwrap_or_default();
        branch_lines.sort_unstable();
        branch_lines.dedup();
        for line in branch_lines {
            let function = enclosing_def(&source, line);
            per_function
                .entry(function)
                .or_default()
                .1
                .push(format!("line {line}"));
        }
        for (function, (lines, branches)) in per_function {
            if lines.is_empty() && branches.is_empty() {
                continue;
            }
            gaps.push(Gap {
                file: file.clone(),
                function,
                lines,
                branches,
            });
        }
    }
    gaps
}

/// The top-level function (or method) whose body holds `line`.
fn enclosing_def(source: &str, line: u32) -> Option<String> {
    source
        .lines()
        .take(line as usize)
        .filter_map(|l| {
            let t = l.trim_start();
            t.strip_prefix("def ")
                .or_else(|| t.strip_prefix("async def "))
                .and_then(|r| r.split('(').next())
                .map(|n| n.trim().to_string())
        })
        .last()
}

/// (location, error, test) of the code defects earlier sessions found, once each.
fn earlier_defects(previous: &[SessionDir]) -> Vec<(String, String, String)> {
    let mut out: Vec<(String, String, String)> = Vec::new();
    for s in previous {
        let results = crate::artifacts::runs(&s.root);
        for (_, run) in &results.runs {
            for t in run.tests() {
                let failed = matches!(t.status, RecordedStatus::Failed | RecordedStatus::Error);
                if !failed || t.classification != Some(Classification::CodeDefect) {
                    continue;
                }
                let Some(ev) = &t.evidence else { continue };
                let location = ev.location.clone().unwrap_or_default();
                if !out.iter().any(|(l, _, _)| *l == location) {
                    out.push((location, ev.error.clone().unwrap_or_default(), t.id.clone()));
                }
            }
        }
    }
    out
}

/// The top suspects of the latest earlier session's fault localisation: (location, score, test).
fn earlier_suspects(previous: &[SessionDir]) -> Vec<(String, f64, String)> {
    let Some(record) = previous.iter().find_map(|s| {
        crate::util::read_json::<crate::artifacts::LocalisationRecord>(
            &s.root.join(crate::artifacts::LOCALISATION_FILE),
        )
        .ok()
    }) else {
        return Vec::new();
    };
    record
        .tests
        .iter()
        .filter_map(|t| {
            let top = t.suspects.first()?;
            Some((top.location.clone(), top.score, t.test.clone()))
        })
        .collect()
}

/// Where each top-level Python function is defined: name -> repository-relative files.
fn definitions(repo: &Path) -> BTreeMap<String, Vec<String>> {
    let mut defs: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for file in crate::testing::detect::walk(repo) {
        if !file.ends_with(".py") || crate::testing::detect::test_pattern(&file).is_some() {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(repo.join(&file)) else {
            continue;
        };
        for line in text.lines() {
            if let Some(name) = line
                .strip_prefix("def ")
                .or_else(|| line.strip_prefix("async def "))
                .or_else(|| line.strip_prefix("class "))
                .and_then(|r| r.split(['(', ':']).next())
            {
                defs.entry(name.trim().to_string())
                    .or_default()
                    .push(file.clone());
            }
        }
    }
    defs
}

/// The file defining the first function a criterion names (in its examples, then its text).
fn locate(c: &Criterion, defs: &BTreeMap<String, Vec<String>>) -> Option<String> {
    let mut names: Vec<String> = c
        .examples
        .iter()
        .filter_map(|e| e.call.split('(').next())
        .map(|n| n.rsplit('.').next().unwrap_or(n).to_string())
        .collect();
    let text = [
        Some(&c.text),
        c.given.as_ref(),
        c.when.as_ref(),
        c.then.as_ref(),
    ];
    for t in text.into_iter().flatten() {
        names.extend(
            t.split('`')
                .skip(1)
                .step_by(2)
                .filter_map(|code| code.split('(').next())
                .map(|n| n.rsplit('.').next().unwrap_or(n).trim().to_string()),
        );
    }
    names
        .iter()
        .find_map(|n| defs.get(n).and_then(|files| files.first().cloned()))
}

/// The code route's boundaries: each Python module in scope with its public functions and
/// classes, its entry point, and whether it uses other modules of the project.
fn boundaries(repo: &Path, scope: &ChangeScope) -> Vec<Boundary> {
    let modules: Vec<String> = scope
        .files
        .iter()
        .map(|f| f.path.clone())
        .filter(|p| p.ends_with(".py") && crate::testing::detect::test_pattern(p).is_none())
        .collect();
    let names: Vec<String> = modules
        .iter()
        .map(|m| {
            m.trim_end_matches(".py")
                .trim_start_matches("src/")
                .replace('/', ".")
        })
        .collect();
    let priority = if scope.whole_project {
        Priority::Medium
    } else {
        Priority::High
    };
    let mut out = Vec::new();
    for file in &modules {
        let Ok(text) = std::fs::read_to_string(repo.join(file)) else {
            continue;
        };
        let top = |prefix: &str| -> Vec<String> {
            text.lines()
                .filter_map(|l| l.strip_prefix(prefix))
                .filter_map(|r| r.split(['(', ':']).next())
                .map(|n| n.trim().to_string())
                .filter(|n| !n.starts_with('_') && !n.is_empty())
                .collect()
        };
        let mut add = |symbols: Vec<String>, kind| {
            if !symbols.is_empty() {
                out.push(Boundary {
                    file: file.clone(),
                    symbols,
                    kind,
                    priority,
                });
            }
        };
        add(top("def "), BoundaryKind::PublicFunction);
        add(top("class "), BoundaryKind::Class);
        if text.contains("if __name__ == \"__main__\"")
            || text.contains("if __name__ == '__main__'")
        {
            add(vec!["__main__".into()], BoundaryKind::EntryPoint);
        }
        let uses: Vec<String> = names
            .iter()
            .filter(|n| !file.trim_end_matches(".py").ends_with(&n.replace('.', "/")))
            .filter(|n| {
                text.lines().any(|l| {
                    let l = l.trim();
                    l.starts_with(&format!("from {n} import")) || l == format!("import {n}")
                })
            })
            .cloned()
            .collect();
        add(uses, BoundaryKind::Integration);
    }
    out
}

/// The framework and two or three of the project's own tests, as style examples.
fn infrastructure_hints(repo: &Path) -> String {
    let tests: Vec<String> = crate::testing::detect::walk(repo)
        .into_iter()
        .filter(|p| crate::testing::detect::test_pattern(p).is_some())
        .take(3)
        .collect();
    let framework =
        crate::testing::detect::detect_framework(repo, &crate::testing::detect::walk(repo))
            .0
            .map(|f| f.to_string())
            .unwrap_or_else(|| "unknown".into());
    if tests.is_empty() {
        framework
    } else {
        format!("{framework}; see {}", tests.join(", "))
    }
}

/// The requirement files of a plan, for the report (what `plan` read).
pub fn requirements(repo: &Path, spec_dir: Option<&Path>) -> Vec<Requirement> {
    req::load_dir(repo, spec_dir).unwrap_or_default()
}
