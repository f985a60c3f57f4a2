//! Why a test file does not even load (a pytest collection error, a `node --check` or module
//! resolution failure, a cargo build error), in the same classes as a failing test: a module that
//! exists nowhere or is imported wrongly is the test's fault, a declared or project-needed
//! third-party package that is not installed is the environment's (with the command that installs
//! it), a syntax error is the fault of whichever file does not parse. Everything else is what
//! [`classify`] says of the loader's text.

use std::collections::VecDeque;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::classify::{classify, Classification, Criticality, Verdict};
use super::report::{TestCase, TestStatus};
use super::runner::LoadError;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadVerdict {
    #[serde(flatten)]
    pub verdict: Verdict,
    /// The command that installs what is missing (env_issue only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub install: Option<String>,
}

/// Classifies a test file that does not load. `repo` is the target repository (its manifests
/// say what is a declared dependency, its files what is the project's own code); `is_test_file`
/// says whether a path, as the loader wrote it or relative to `repo`, is test code.
pub fn classify_load_error(
    le: &LoadError,
    repo: &Path,
    is_test_file: impl Fn(&str) -> bool,
) -> LoadVerdict {
    let ctx = Ctx {
        le,
        repo,
        is_test_file: &is_test_file,
    };
    let case = TestCase {
        id: le.file.clone(),
        name: le.file.clone(),
        classname: None,
        file: Some(le.file.clone()),
        line: None,
        status: TestStatus::Error,
        duration_s: None,
        message: None,
        detail: Some(le.error.clone()),
    };
    // The repository decides what is project code: the runners load a mirror of it, whose paths
    // can look like test paths (they carry the layer's name).
    let base = classify(&case, |p| ctx.project_file(p).is_none());
    let base = Verdict {
        location: ctx.location(base.location.as_deref()),
        error: match base.error.as_str() {
            // classify's word for "no exception named": rustc names its errors otherwise, and
            // a Go test file that does not load failed go test's build (compile or vet).
            "failure" if le.file.ends_with(".go") => "build error".into(),
            "failure" => rustc_code(&le.error).unwrap_or(base.error),
            _ => base.error,
        },
        ..base
    };
    if matches!(
        base.classification,
        Classification::EnvIssue | Classification::SandboxDenied
    ) {
        return plain(base);
    }
    if let Some(v) = missing_module(&ctx, &base) {
        return v;
    }
    if let Some(v) = syntax_error(&ctx, &base) {
        return plain(v);
    }
    plain(fallback(&ctx, base))
}

struct Ctx<'a> {
    le: &'a LoadError,
    repo: &'a Path,
    is_test_file: &'a dyn Fn(&str) -> bool,
}

impl Ctx<'_> {
    fn text(&self) -> &str {
        &self.le.error
    }

    /// The file that does not load, however the loader spelled its path.
    fn is_load_file(&self, path: &str) -> bool {
        let file = self.le.file.trim_start_matches("./");
        !file.is_empty() && (path == file || path.ends_with(&format!("/{file}")))
    }

    /// `path` relative to the repository when it names one of the project's own (non-test)
    /// files; None for the test file, other tests, libraries and the interpreter.
    fn project_file(&self, path: &str) -> Option<String> {
        if self.is_load_file(path) || is_library(path) {
            return None;
        }
        if let Some(rel) = in_repo(self.repo, path) {
            return (!(self.is_test_file)(&rel)).then_some(rel);
        }
        (!(self.is_test_file)(path)).then(|| path.trim_start_matches("../").to_string())
    }

    /// `file:line` with the file relative to the repository when it is there; when the loader
    /// named no frame, the first `<file>:<line>` of the file that does not load.
    fn location(&self, found: Option<&str>) -> Option<String> {
        let Some(loc) = found else {
            return self
                .load_file_line()
                .map(|n| format!("{}:{n}", self.le.file));
        };
        let (path, line) = split_location(loc);
        let path = if self.is_load_file(path) {
            self.le.file.clone()
        } else {
            in_repo(self.repo, path).unwrap_or_else(|| path.to_string())
        };
        Some(match line {
            Some(n) => format!("{path}:{n}"),
            None => path,
        })
    }

    /// The line in `<file>:<line>` (cargo's short messages, node's syntax errors).
    fn load_file_line(&self) -> Option<u32> {
        let file = &self.le.file;
        if file.is_empty() {
            return None;
        }
        self.text()
            .match_indices(file.as_str())
            .find_map(|(at, _)| {
                let rest = self.text()[at + file.len()..].strip_prefix(':')?;
                leading_number(rest)
            })
    }
}

fn plain(verdict: Verdict) -> LoadVerdict {
    LoadVerdict {
        verdict,
        install: None,
    }
}

fn reclassify(base: &Verdict, classification: Classification, reason: String) -> Verdict {
    let criticality = match classification {
        Classification::CodeDefect => Criticality::High,
        Classification::EnvIssue => Criticality::Medium,
        _ => Criticality::Low,
    };
    Verdict {
        classification,
        criticality,
        reason,
        ..base.clone()
    }
}

// ---- missing modules ---------------------------------------------------------------------

enum Missing {
    Python(String),
    Node(String),
    Rust(String),
}

fn missing(text: &str) -> Option<Missing> {
    // Python names the innermost failure last.
    if let Some(m) = quoted_last(text, "No module named '", '\'') {
        return Some(Missing::Python(m));
    }
    for marker in ["Cannot find module '", "Cannot find package '"] {
        if let Some(m) = quoted_first(text, marker, '\'') {
            return Some(Missing::Node(m));
        }
    }
    [
        "unresolved import `",
        "can't find crate for `",
        "unlinked crate `",
        "undeclared crate or module `",
    ]
    .iter()
    .filter_map(|m| text.find(m).map(|at| (at, m)))
    .min()
    .and_then(|(_, m)| quoted_first(text, m, '`'))
    .map(Missing::Rust)
}

fn missing_module(ctx: &Ctx, base: &Verdict) -> Option<LoadVerdict> {
    Some(match missing(ctx.text())? {
        Missing::Python(m) => python_missing(ctx, base, &m),
        Missing::Node(m) => node_missing(ctx, base, &m)?,
        Missing::Rust(m) => plain(rust_missing(ctx, base, &m)),
    })
}

/// Where the failed import was written: `(path, is project code)`.
fn importer(ctx: &Ctx, base: &Verdict) -> Option<(String, bool)> {
    let loc = base.location.clone()?;
    let project = ctx.project_file(split_location(&loc).0).is_some();
    Some((loc, project))
}

fn python_missing(ctx: &Ctx, base: &Verdict, module: &str) -> LoadVerdict {
    let (at, in_project) = importer(ctx, base).unwrap_or_else(|| (ctx.le.file.clone(), false));
    let top = module.split('.').next().unwrap_or(module);
    if let Some(found) = find_python_module(ctx.repo, module) {
        let fix = python_import_fix(&found, module);
        let reason = format!(
            "`{module}` is in the repository at {found} but is not importable under that name (imported at {at}): {fix}."
        );
        return plain(reclassify(base, Classification::TestDefect, reason));
    }
    let project_top = (top != module)
        .then(|| find_python_module(ctx.repo, top))
        .flatten();
    if let Some(pkg) = project_top {
        let (class, whose) = if in_project {
            (Classification::CodeDefect, "the project's own code")
        } else {
            (Classification::TestDefect, "the test")
        };
        let reason = format!(
            "The project has no module `{module}` (its `{top}` is at {pkg}), yet {whose} imports it at {at}."
        );
        return plain(reclassify(base, class, reason));
    }
    if let Some(dep) = python_declared(ctx.repo, module) {
        let reason = format!(
            "`{module}` is not installed although {} declares `{}`: install it with `{}`.",
            dep.source, dep.requirement, dep.install
        );
        return env_issue(base, reason, dep.install);
    }
    let install = format!("{} install {}", pip(ctx.repo), distribution(module));
    if in_project {
        let reason = format!(
            "The project's {at} imports `{module}`, which is not installed: install it with `{install}`."
        );
        return env_issue(base, reason, install);
    }
    if let Some(lib) = library_importer(ctx.text()) {
        let reason = format!(
            "The installed package at {lib} needs `{module}`, which is not installed: install it with `{install}`."
        );
        return env_issue(base, reason, install);
    }
    let reason = format!(
        "The test imports `{module}` at {at}, which is neither the project's, nor installed, nor a declared dependency: import only the project and what it declares."
    );
    plain(reclassify(base, Classification::TestDefect, reason))
}

/// The innermost frame when it is inside an installed package (not pytest's or importlib's own):
/// then a dependency of a dependency is missing.
fn library_importer(text: &str) -> Option<String> {
    let frame = text
        .lines()
        .take_while(|l| !l.starts_with("E "))
        .filter(|l| {
            l.split_once(".py:")
                .is_some_and(|(_, rest)| leading_number(rest).is_some())
        })
        .last()?;
    let installed = ["site-packages/", "dist-packages/"]
        .iter()
        .any(|m| frame.contains(m));
    let tooling = ["/_pytest/", "/pluggy/", "importlib"]
        .iter()
        .any(|m| frame.contains(m));
    (installed && !tooling).then(|| {
        let path = frame.split(".py:").next().unwrap_or(frame);
        format!("{}.py", path.trim())
    })
}

fn env_issue(base: &Verdict, reason: String, install: String) -> LoadVerdict {
    LoadVerdict {
        verdict: reclassify(base, Classification::EnvIssue, reason),
        install: Some(install),
    }
}

/// How to import a module found at `rel` (`app/inventory/__init__.py`): by its package path from
/// the project root (or src/), which the runners put on sys.path.
fn python_import_fix(rel: &str, module: &str) -> String {
    let stem = rel
        .strip_suffix("/__init__.py")
        .or_else(|| rel.strip_suffix(".py"))
        .unwrap_or(rel);
    let stem = stem.strip_prefix("src/").unwrap_or(stem);
    let parts: Vec<&str> = stem.split('/').collect();
    let dotted = parts.join(".");
    if dotted == module {
        return "the runners put the project root and src/ on sys.path, so the test's own sys.path or package changes hide it".into();
    }
    if parts.iter().all(|p| is_identifier(p)) {
        return format!("import it as `{dotted}`");
    }
    let depth = module.split('.').count();
    let dir = parts[..parts.len().saturating_sub(depth)].join("/");
    let dir = if dir.is_empty() { "." } else { dir.as_str() };
    format!("put {dir}/ on sys.path (in a conftest.py) before importing it")
}

fn node_missing(ctx: &Ctx, base: &Verdict, spec: &str) -> Option<LoadVerdict> {
    let (at, in_project) = node_importer(ctx)
        .or_else(|| importer(ctx, base))
        .unwrap_or_else(|| (ctx.le.file.clone(), false));
    // node's error codes: ESM's ERR_MODULE_NOT_FOUND, CommonJS's MODULE_NOT_FOUND.
    let code = if ctx.text().contains("ERR_MODULE_NOT_FOUND") {
        "ERR_MODULE_NOT_FOUND"
    } else {
        "MODULE_NOT_FOUND"
    };
    let base = &Verdict {
        location: base.location.clone().or_else(|| Some(at.clone())),
        error: code.into(),
        ..base.clone()
    };
    if spec.starts_with('.') || spec.starts_with('/') {
        // A relative import the project's code makes is the project's business: leave it to
        // the general rules.
        if in_project {
            return None;
        }
        let name = spec.rsplit('/').next().unwrap_or(spec);
        let hint = match find_node_file(ctx.repo, name) {
            Some(found) => format!("the project has it at {found}: fix the relative path"),
            None => format!("the project has no `{name}`"),
        };
        let reason = format!("The test at {at} imports `{spec}`, which does not exist; {hint}.");
        return Some(plain(reclassify(base, Classification::TestDefect, reason)));
    }
    let pkg = node_package(spec);
    let manifest = read_json(&ctx.repo.join("package.json"));
    if manifest.as_ref().and_then(|m| m.get("name")?.as_str()) == Some(pkg) {
        let reason = format!(
            "The test at {at} imports the project by its package name `{pkg}`, which is not linked into node_modules: import the project's files by relative path."
        );
        return Some(plain(reclassify(base, Classification::TestDefect, reason)));
    }
    if manifest.as_ref().is_some_and(|m| node_declares(m, pkg)) {
        let install = format!("npm install --prefix {}", repo_arg(ctx.repo));
        let reason = format!(
            "`{pkg}` is declared in package.json but not installed: install the project's dependencies with `{install}`."
        );
        return Some(env_issue(base, reason, install));
    }
    if in_project {
        let install = format!("npm install --prefix {} {pkg}", repo_arg(ctx.repo));
        let reason = format!(
            "The project's {at} requires `{pkg}`, which is not installed: install it with `{install}`."
        );
        return Some(env_issue(base, reason, install));
    }
    let reason = format!(
        "The test at {at} imports `{pkg}`, which is neither the project's, nor installed, nor declared in package.json: import only the project and what it declares."
    );
    Some(plain(reclassify(base, Classification::TestDefect, reason)))
}

/// The file whose import failed: the first entry of CommonJS's "Require stack", or ESM's
/// "imported from <path>".
fn node_importer(ctx: &Ctx) -> Option<(String, bool)> {
    let text = ctx.text();
    let path = text
        .lines()
        .skip_while(|l| !l.trim().starts_with("Require stack:"))
        .nth(1)
        .and_then(|l| l.trim().strip_prefix("- "))
        .or_else(|| {
            let rest = &text[text.find(" imported from ")? + " imported from ".len()..];
            rest.lines().next()
        })?
        .trim();
    let project = ctx.project_file(path);
    let shown = project
        .clone()
        .or_else(|| ctx.is_load_file(path).then(|| ctx.le.file.clone()))
        .unwrap_or_else(|| path.to_string());
    Some((shown, project.is_some()))
}

/// `lodash/fp` -> `lodash`, `@scope/pkg/sub` -> `@scope/pkg`.
fn node_package(spec: &str) -> &str {
    let end = if spec.starts_with('@') { 2 } else { 1 };
    match spec.match_indices('/').nth(end - 1) {
        Some((at, _)) => &spec[..at],
        None => spec,
    }
}

fn node_declares(manifest: &serde_json::Value, pkg: &str) -> bool {
    [
        "dependencies",
        "devDependencies",
        "peerDependencies",
        "optionalDependencies",
    ]
    .iter()
    .any(|k| manifest.get(k).and_then(|d| d.get(pkg)).is_some())
}

/// A Rust test cannot add dependencies: whatever does not resolve is the test's fault.
fn rust_missing(ctx: &Ctx, base: &Verdict, path: &str) -> Verdict {
    let at = base.location.clone().unwrap_or_else(|| ctx.le.file.clone());
    let krate = path.split("::").next().unwrap_or(path);
    let manifest = read_toml(&ctx.repo.join("Cargo.toml"));
    let own = manifest
        .as_ref()
        .and_then(|m| m.get("package")?.get("name")?.as_str())
        .map(|n| n.replace('-', "_"));
    let local = matches!(krate, "crate" | "self" | "super") || own.as_deref() == Some(krate);
    let declared = manifest.as_ref().is_some_and(|m| cargo_declares(m, krate));
    let reason = if local || declared {
        format!("The test imports `{path}` at {at}, which does not exist: use only items the crate and its dependencies define.")
    } else {
        format!("The test uses the crate `{krate}` at {at}, which is not a dependency in Cargo.toml: use only the crate and its declared dependencies.")
    };
    reclassify(base, Classification::TestDefect, reason)
}

fn cargo_declares(manifest: &toml::Value, krate: &str) -> bool {
    ["dependencies", "dev-dependencies", "build-dependencies"]
        .iter()
        .filter_map(|k| manifest.get(k)?.as_table())
        .flat_map(|t| t.keys())
        .any(|k| k.replace('-', "_") == krate)
}

// ---- syntax errors -----------------------------------------------------------------------

const SYNTAX_ERRORS: [&str; 3] = ["SyntaxError", "IndentationError", "TabError"];

/// A file that does not parse: the project's own is a code defect, the test's a test defect.
fn syntax_error(ctx: &Ctx, base: &Verdict) -> Option<Verdict> {
    let (kind, message) = syntax_kind(ctx.text())?;
    let (path, line) = syntax_location(ctx.text())?;
    let what = if message.is_empty() {
        kind.clone()
    } else {
        format!("{kind}: {message}")
    };
    let base = &Verdict {
        error: kind,
        ..base.clone()
    };
    if let Some(rel) = ctx.project_file(&path) {
        let reason =
            format!("The project's own {rel}:{line} does not parse ({what}): fix the code there.");
        return Some(Verdict {
            location: Some(format!("{rel}:{line}")),
            ..reclassify(base, Classification::CodeDefect, reason)
        });
    }
    if ctx.is_load_file(&path) || (ctx.is_test_file)(&path) {
        let shown = if ctx.is_load_file(&path) {
            ctx.le.file.clone()
        } else {
            path
        };
        let reason = format!(
            "The test file {shown}:{line} does not parse ({what}): fix or regenerate the test."
        );
        return Some(Verdict {
            location: Some(format!("{shown}:{line}")),
            ..reclassify(base, Classification::TestDefect, reason)
        });
    }
    None
}

/// The last `SyntaxError: msg` (or IndentationError, TabError) line.
fn syntax_kind(text: &str) -> Option<(String, String)> {
    text.lines().rev().find_map(|l| {
        // pytest prefixes the exception's lines with `E   `.
        let l = l
            .strip_prefix('E')
            .filter(|r| r.starts_with(' '))
            .unwrap_or(l)
            .trim();
        let kind = SYNTAX_ERRORS.iter().find(|k| l.starts_with(*k))?;
        let rest = &l[kind.len()..];
        let message = rest.strip_prefix(':').map(str::trim);
        (rest.is_empty() || message.is_some())
            .then(|| (kind.to_string(), message.unwrap_or("").to_string()))
    })
}

/// Where the parser stopped: Python's `File "<path>", line N`, or node's `<path>.js:N` header.
fn syntax_location(text: &str) -> Option<(String, u32)> {
    let python = text.lines().rev().find_map(python_file_line);
    python.or_else(|| text.lines().find_map(js_header))
}

fn python_file_line(line: &str) -> Option<(String, u32)> {
    let rest = line.split_once("File \"")?.1;
    let (path, rest) = rest.split_once('"')?;
    let n = rest.trim_start_matches(',').trim().strip_prefix("line ")?;
    Some((path.to_string(), leading_number(n)?))
}

fn js_header(line: &str) -> Option<(String, u32)> {
    let (path, n) = line.trim().rsplit_once(':')?;
    let is_js = [".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".jsx", ".tsx"]
        .iter()
        .any(|e| path.ends_with(e));
    if !is_js {
        return None;
    }
    let line = n.parse().ok()?;
    Some((path.trim_start_matches("file://").to_string(), line))
}

// ---- everything else ---------------------------------------------------------------------

/// What `classify` said, except that a file that never loaded ran no assertion: a code defect
/// needs an error raised in the project's own code.
fn fallback(ctx: &Ctx, base: Verdict) -> Verdict {
    let in_project = base
        .location
        .as_deref()
        .is_some_and(|l| ctx.project_file(split_location(l).0).is_some());
    let at = base.location.clone().unwrap_or_else(|| ctx.le.file.clone());
    if base.classification == Classification::CodeDefect && in_project {
        let reason = format!(
            "Importing the project's code raised {} at {at}: fix the code there.",
            base.error
        );
        return reclassify(&base, Classification::CodeDefect, reason);
    }
    if base.classification == Classification::CodeDefect {
        let reason = format!(
            "The test file {} does not load ({} at {at}): fix or regenerate the test.",
            ctx.le.file, base.error
        );
        return reclassify(&base, Classification::TestDefect, reason);
    }
    let reason = format!("{} does not load: {}.", ctx.le.file, base.reason);
    Verdict { reason, ..base }
}

// ---- declared Python dependencies --------------------------------------------------------

/// A requirement that names the missing module's distribution, and where.
struct Declared {
    /// The requirement as declared (`PyYAML>=6`).
    requirement: String,
    /// The manifest, relative to the repository.
    source: String,
    install: String,
}

fn python_declared(repo: &Path, module: &str) -> Option<Declared> {
    let wanted = distribution_candidates(module);
    let matches = |req: &str| wanted.contains(&normalise(requirement_name(req)));
    for file in requirement_files(repo) {
        let Ok(text) = std::fs::read_to_string(repo.join(&file)) else {
            continue;
        };
        let found = requirement_lines(&text)
            .find(|r| matches(r))
            .map(str::to_string);
        if let Some(req) = found {
            return Some(Declared {
                requirement: req,
                install: format!(
                    "{} install -r {}",
                    pip(repo),
                    crate::hint::quote(&repo.join(&file).to_string_lossy())
                ),
                source: file,
            });
        }
    }
    let manifests = [
        (
            "pyproject.toml",
            pyproject_requirements as fn(&str) -> Vec<String>,
        ),
        ("setup.cfg", setup_cfg_requirements),
    ];
    for (file, parse) in manifests {
        let Ok(text) = std::fs::read_to_string(repo.join(file)) else {
            continue;
        };
        if let Some(req) = parse(&text).into_iter().find(|r| matches(r)) {
            let spec = req.split(';').next().unwrap_or(&req).trim().to_string();
            return Some(Declared {
                install: format!("{} install {}", pip(repo), crate::hint::quote(&spec)),
                requirement: req,
                source: file.into(),
            });
        }
    }
    None
}

/// `requirements*.txt` at the root, `requirements.txt` first, then `requirements/*.txt`.
fn requirement_files(repo: &Path) -> Vec<String> {
    let mut files = txt_files(repo, "", |n| n.starts_with("requirements"));
    files.sort_by_key(|f| (f != "requirements.txt", f.clone()));
    files.extend(txt_files(
        &repo.join("requirements"),
        "requirements/",
        |_| true,
    ));
    files
}

fn txt_files(dir: &Path, prefix: &str, keep: impl Fn(&str) -> bool) -> Vec<String> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<String> = rd
        .flatten()
        .filter(|e| e.path().is_file())
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.ends_with(".txt") && keep(n))
        .map(|n| format!("{prefix}{n}"))
        .collect();
    out.sort();
    out
}

/// Requirement lines of a requirements file: no comments, options, includes or blank lines.
fn requirement_lines(text: &str) -> impl Iterator<Item = &str> {
    text.lines()
        .map(|l| l.split(" #").next().unwrap_or(l).trim())
        .filter(|l| !l.is_empty() && !l.starts_with('#') && !l.starts_with('-'))
}

fn pyproject_requirements(text: &str) -> Vec<String> {
    let Ok(doc) = text.parse::<toml::Value>() else {
        return Vec::new();
    };
    let strings = |v: Option<&toml::Value>| -> Vec<String> {
        v.and_then(toml::Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    let tables = |v: Option<&toml::Value>| -> Vec<String> {
        v.and_then(toml::Value::as_table)
            .map(|t| t.values().flat_map(|g| strings(Some(g))).collect())
            .unwrap_or_default()
    };
    let keys = |v: Option<&toml::Value>| -> Vec<String> {
        v.and_then(toml::Value::as_table)
            .map(|t| t.keys().filter(|k| *k != "python").cloned().collect())
            .unwrap_or_default()
    };
    let project = doc.get("project");
    let poetry = doc.get("tool").and_then(|t| t.get("poetry"));
    let mut reqs = strings(project.and_then(|p| p.get("dependencies")));
    reqs.extend(tables(project.and_then(|p| p.get("optional-dependencies"))));
    reqs.extend(tables(doc.get("dependency-groups")));
    reqs.extend(keys(poetry.and_then(|p| p.get("dependencies"))));
    reqs.extend(keys(poetry.and_then(|p| p.get("dev-dependencies"))));
    if let Some(groups) = poetry
        .and_then(|p| p.get("group"))
        .and_then(toml::Value::as_table)
    {
        for g in groups.values() {
            reqs.extend(keys(g.get("dependencies")));
        }
    }
    reqs
}

/// `install_requires`, `tests_require` and every `extras_require` entry: one requirement per
/// (continuation) line.
fn setup_cfg_requirements(text: &str) -> Vec<String> {
    let mut reqs = Vec::new();
    let mut section = String::new();
    let mut in_list = false;
    for raw in text.lines() {
        let line = raw.split(" #").next().unwrap_or(raw);
        let trimmed = line.trim();
        if trimmed.starts_with('[') {
            section = trimmed.trim_matches(|c| c == '[' || c == ']').to_string();
            in_list = false;
            continue;
        }
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with(';') {
            continue;
        }
        let continuation = line.starts_with(|c: char| c.is_whitespace());
        if continuation {
            if in_list {
                reqs.push(trimmed.to_string());
            }
            continue;
        }
        let (key, value) = trimmed.split_once('=').unwrap_or((trimmed, ""));
        let key = key.trim();
        in_list = (section == "options" && matches!(key, "install_requires" | "tests_require"))
            || section == "options.extras_require";
        if in_list && !value.trim().is_empty() {
            reqs.push(value.trim().to_string());
        }
    }
    reqs
}

/// `PyYAML[extra]>=6 ; marker` -> `PyYAML`.
fn requirement_name(req: &str) -> &str {
    let req = req.trim();
    let end = req
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
        .unwrap_or(req.len());
    &req[..end]
}

/// PEP 503: case-insensitive, runs of `-`, `_`, `.` are one `-`.
fn normalise(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            if !out.ends_with('-') {
                out.push('-');
            }
        } else {
            out.push(c.to_ascii_lowercase());
        }
    }
    out
}

/// Import names whose distribution is named differently.
const DISTRIBUTIONS: [(&str, &str); 30] = [
    ("yaml", "PyYAML"),
    ("PIL", "Pillow"),
    ("sklearn", "scikit-learn"),
    ("skimage", "scikit-image"),
    ("cv2", "opencv-python"),
    ("bs4", "beautifulsoup4"),
    ("dateutil", "python-dateutil"),
    ("attr", "attrs"),
    ("jwt", "PyJWT"),
    ("Crypto", "pycryptodome"),
    ("dotenv", "python-dotenv"),
    ("magic", "python-magic"),
    ("serial", "pyserial"),
    ("usb", "pyusb"),
    ("git", "GitPython"),
    ("google.protobuf", "protobuf"),
    ("OpenSSL", "pyOpenSSL"),
    ("MySQLdb", "mysqlclient"),
    ("zmq", "pyzmq"),
    ("docx", "python-docx"),
    ("pptx", "python-pptx"),
    ("fitz", "PyMuPDF"),
    ("jose", "python-jose"),
    ("multipart", "python-multipart"),
    ("slugify", "python-slugify"),
    ("dns", "dnspython"),
    ("nacl", "PyNaCl"),
    ("Bio", "biopython"),
    ("websocket", "websocket-client"),
    ("pkg_resources", "setuptools"),
];

/// The distribution that provides `module`: the longest mapped package it is in
/// (`google.protobuf.message` -> protobuf), else its top-level name.
fn distribution(module: &str) -> String {
    let top = module.split('.').next().unwrap_or(module);
    let within = |m: &str| module == m || module.starts_with(&format!("{m}."));
    DISTRIBUTIONS
        .iter()
        .filter(|(m, _)| within(m))
        .max_by_key(|(m, _)| m.len())
        .map_or(top, |(_, d)| *d)
        .to_string()
}

/// Normalised names a requirement for `module` could carry: its distribution and the import
/// name itself.
fn distribution_candidates(module: &str) -> Vec<String> {
    let top = module.split('.').next().unwrap_or(module);
    vec![normalise(&distribution(module)), normalise(top)]
}

/// The pip of the interpreter the project's tests run with (its .venv, else python3), so the
/// install lands where the tests look.
fn pip(repo: &Path) -> String {
    let python = crate::testing::toolchain::python_for(repo);
    format!("{} -m pip", crate::hint::quote(&python))
}

/// The repository as an argument: commands must work from wherever they are pasted.
fn repo_arg(repo: &Path) -> String {
    crate::hint::quote(&repo.to_string_lossy())
}

// ---- the repository ----------------------------------------------------------------------

/// Bounds on the walk that looks for a module in the repository.
const WALK_MAX_DEPTH: usize = 12;
const WALK_MAX_ENTRIES: usize = 50_000;
const SKIPPED_DIRS: [&str; 6] = [
    "node_modules",
    "target",
    "__pycache__",
    "venv",
    "site-packages",
    "dist-packages",
];

/// The shallowest file (relative to `repo`) that `found` accepts, skipping VCS, virtualenv,
/// build and dependency folders.
fn walk(repo: &Path, found: impl Fn(&str) -> bool) -> Option<String> {
    let mut queue = VecDeque::from([(repo.to_path_buf(), String::new(), 0usize)]);
    let mut seen = 0;
    while let Some((dir, rel, depth)) = queue.pop_front() {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut entries: Vec<_> = rd.flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            seen += 1;
            if seen > WALK_MAX_ENTRIES {
                return None;
            }
            let Ok(name) = e.file_name().into_string() else {
                continue;
            };
            let path = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            let Ok(kind) = e.file_type() else {
                continue;
            };
            if kind.is_dir() {
                let skip = name.starts_with('.') || SKIPPED_DIRS.contains(&name.as_str());
                if !skip && depth < WALK_MAX_DEPTH {
                    queue.push_back((e.path(), path, depth + 1));
                }
            } else if kind.is_file() && found(&path) {
                return Some(path);
            }
        }
    }
    None
}

/// `a.b` as `.../a/b.py` or `.../a/b/__init__.py` anywhere in the repository.
fn find_python_module(repo: &Path, module: &str) -> Option<String> {
    let stem = module.replace('.', "/");
    let names = [format!("{stem}.py"), format!("{stem}/__init__.py")];
    walk(repo, |rel| {
        names
            .iter()
            .any(|n| rel == n || rel.ends_with(&format!("/{n}")))
    })
}

/// A file named `name` (with or without a JavaScript extension, or as a folder's index).
fn find_node_file(repo: &Path, name: &str) -> Option<String> {
    let stem = name
        .rsplit_once('.')
        .filter(|(_, ext)| ext.len() <= 4)
        .map_or(name, |(s, _)| s);
    walk(repo, |rel| {
        let file = rel.rsplit('/').next().unwrap_or(rel);
        let parent = rel.rsplit('/').nth(1).unwrap_or("");
        let file_stem = file.rsplit_once('.').map_or(file, |(s, _)| s);
        let is_js = [".js", ".mjs", ".cjs", ".ts", ".jsx", ".tsx", ".json"]
            .iter()
            .any(|e| file.ends_with(e));
        is_js && (file_stem == stem || (file_stem == "index" && parent == stem))
    })
}

/// The longest trailing part of `path` that is a file of the repository.
fn in_repo(repo: &Path, path: &str) -> Option<String> {
    let parts: Vec<&str> = path
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    (0..parts.len())
        .map(|i| &parts[i..])
        .filter(|tail| !tail.contains(&".."))
        .map(|tail| tail.join("/"))
        .find(|rel| repo.join(rel).is_file())
}

/// Installed packages, the interpreter's own files and `<string>`-like pseudo files.
fn is_library(path: &str) -> bool {
    path.starts_with('<')
        || [
            "site-packages",
            "dist-packages",
            "/lib/python",
            "<frozen",
            "node_modules",
            "node:internal",
        ]
        .iter()
        .any(|m| path.contains(m))
}

fn read_json(path: &Path) -> Option<serde_json::Value> {
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}

fn read_toml(path: &Path) -> Option<toml::Value> {
    std::fs::read_to_string(path).ok()?.parse().ok()
}

// ---- small text helpers ------------------------------------------------------------------

/// `path:12` -> (`path`, Some(12)); `path` -> (`path`, None).
fn split_location(loc: &str) -> (&str, Option<u32>) {
    match loc.rsplit_once(':') {
        Some((path, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
            (path, n.parse().ok())
        }
        _ => (loc, None),
    }
}

/// rustc's `error[E0432]` code, or `compile error` for an uncoded rustc error.
fn rustc_code(text: &str) -> Option<String> {
    if let Some(at) = text.find("error[E") {
        let code = text[at + "error[".len()..].split(']').next()?;
        return Some(code.to_string());
    }
    text.contains(": error:").then(|| "compile error".into())
}

fn leading_number(s: &str) -> Option<u32> {
    let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    s[..end].parse().ok()
}

fn quoted_first(text: &str, marker: &str, close: char) -> Option<String> {
    let rest = &text[text.find(marker)? + marker.len()..];
    let name = rest.split(close).next()?;
    (!name.is_empty() && name.len() < rest.len()).then(|| name.to_string())
}

fn quoted_last(text: &str, marker: &str, close: char) -> Option<String> {
    let rest = &text[text.rfind(marker)? + marker.len()..];
    let name = rest.split(close).next()?;
    (!name.is_empty() && name.len() < rest.len()).then(|| name.to_string())
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    // Collection errors as pytest 9 writes them into its JUnit report (`<error>` text) for a
    // session laid out like the runner's: tests in /s/tests/L1-unit (the cwd), the repository
    // mirrored into /s/workspace/python-L1-unit.
    const NOWHERE: &str = "ImportError while importing test module '/s/tests/L1-unit/test_calc.py'.
Hint: make sure your test modules/packages have valid Python names.
Traceback:
/usr/lib/python3.11/importlib/__init__.py:126: in import_module
    return _bootstrap._gcd_import(name[level:], package, level)
           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
test_calc.py:3: in <module>
    import nosuchmodule
E   ModuleNotFoundError: No module named 'nosuchmodule'";

    const TEST_NEEDS_NUMPY: &str =
        "ImportError while importing test module '/s/tests/L1-unit/test_calc.py'.
Hint: make sure your test modules/packages have valid Python names.
Traceback:
/usr/lib/python3.11/importlib/__init__.py:126: in import_module
    return _bootstrap._gcd_import(name[level:], package, level)
           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
test_calc.py:1: in <module>
    import numpy as np
E   ModuleNotFoundError: No module named 'numpy'";

    const TEST_NEEDS_PIL: &str =
        "ImportError while importing test module '/s/tests/L1-unit/test_img.py'.
Hint: make sure your test modules/packages have valid Python names.
Traceback:
/usr/lib/python3.11/importlib/__init__.py:126: in import_module
    return _bootstrap._gcd_import(name[level:], package, level)
           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
test_img.py:1: in <module>
    from PIL import Image
E   ModuleNotFoundError: No module named 'PIL'";

    const CODE_NEEDS_NUMPY: &str =
        "ImportError while importing test module '/s/tests/L1-unit/test_stats.py'.
Hint: make sure your test modules/packages have valid Python names.
Traceback:
/usr/lib/python3.11/importlib/__init__.py:126: in import_module
    return _bootstrap._gcd_import(name[level:], package, level)
           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
test_stats.py:1: in <module>
    from calc import stats
../../workspace/python-L1-unit/calc/stats.py:1: in <module>
    import numpy
E   ModuleNotFoundError: No module named 'numpy'";

    const IN_REPO: &str =
        "ImportError while importing test module '/s/tests/L1-unit/test_pricing.py'.
Hint: make sure your test modules/packages have valid Python names.
Traceback:
/usr/lib/python3.11/importlib/__init__.py:126: in import_module
    return _bootstrap._gcd_import(name[level:], package, level)
           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
test_pricing.py:1: in <module>
    from inventory import pricing
E   ModuleNotFoundError: No module named 'inventory'";

    const NO_SUBMODULE: &str =
        "ImportError while importing test module '/s/tests/L1-unit/test_sub.py'.
Hint: make sure your test modules/packages have valid Python names.
Traceback:
/usr/lib/python3.11/importlib/__init__.py:126: in import_module
    return _bootstrap._gcd_import(name[level:], package, level)
           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
test_sub.py:1: in <module>
    import calc.nosuch
E   ModuleNotFoundError: No module named 'calc.nosuch'";

    const CODE_SYNTAX: &str =
        "/usr/lib/python3.11/site-packages/_pytest/python.py:528: in importtestmodule
    mod = import_path(
/usr/lib/python3.11/importlib/__init__.py:126: in import_module
    return _bootstrap._gcd_import(name[level:], package, level)
<frozen importlib._bootstrap>:1204: in _gcd_import
    ???
/usr/lib/python3.11/site-packages/_pytest/assertion/rewrite.py:185: in exec_module
    exec(co, module.__dict__)
test_calc.py:1: in <module>
    from calc import core
E     File \"/s/workspace/python-L1-unit/calc/core.py\", line 3
E       def add(a, b:
E              ^
E   SyntaxError: '(' was never closed";

    const TEST_SYNTAX: &str =
        "/usr/lib/python3.11/site-packages/_pytest/python.py:528: in importtestmodule
    mod = import_path(
<frozen importlib._bootstrap>:1204: in _gcd_import
    ???
/usr/lib/python3.11/site-packages/_pytest/assertion/rewrite.py:339: in _rewrite_test
    tree = ast.parse(source, filename=strfn)
/usr/lib/python3.11/ast.py:50: in parse
    return compile(source, filename, mode, flags,
E     File \"/s/tests/L1-unit/test_calc.py\", line 1
E       def test_a(:
E                  ^
E   SyntaxError: invalid syntax";

    const TEST_INDENT: &str =
        "/usr/lib/python3.11/site-packages/_pytest/assertion/rewrite.py:339: in _rewrite_test
    tree = ast.parse(source, filename=strfn)
/usr/lib/python3.11/ast.py:50: in parse
    return compile(source, filename, mode, flags,
E     File \"/s/tests/L1-unit/test_calc.py\", line 3
E       y = 2
E   IndentationError: unexpected indent";

    const CODE_RAISES: &str = "test_calc.py:1: in <module>
    from calc import config
../../workspace/python-L1-unit/calc/config.py:1: in <module>
    RATE = int(\"x\")
           ^^^^^^^^
E   ValueError: invalid literal for int() with base 10: 'x'";

    // node 20, as node_runner keeps it (no `at` lines).
    const NODE_CODE_NEEDS_LODASH: &str = "node:internal/modules/cjs/loader:1210
  throw err;
  ^
Error: Cannot find module 'lodash'
Require stack:
- /s/workspace/node-L1-unit/src/util.js
- /s/workspace/node-L1-unit/tt-tests/L1-unit/util.test.js";

    const NODE_TEST_NEEDS_PKG: &str = "node:internal/modules/esm/resolve:873
  throw new ERR_MODULE_NOT_FOUND(packageName, fileURLToPath(base), null);
        ^
Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'leftpadx' imported from /s/workspace/node-L1-unit/tt-tests/L1-unit/util.test.mjs";

    const NODE_RELATIVE: &str = "node:internal/modules/esm/resolve:283
    throw new ERR_MODULE_NOT_FOUND(
          ^
Error [ERR_MODULE_NOT_FOUND]: Cannot find module '/s/workspace/node-L1-unit/src/strings.js' imported from /s/workspace/node-L1-unit/tt-tests/L1-unit/util.test.mjs";

    const NODE_SYNTAX: &str = "util.test.js:2
SyntaxError: Unexpected end of input";

    // cargo build --tests --message-format=short, as cargo_runner keeps a file's lines.
    const RUST_UNDECLARED: &str = "tt_L1_a.rs:1:5: error[E0432]: unresolved import `serde_yaml`: use of unresolved module or unlinked crate `serde_yaml`";
    const RUST_NO_ITEM: &str =
        "tt_L1_b.rs:1:5: error[E0432]: unresolved import `geom::nosuch`: no `nosuch` in the root";
    const RUST_NO_CRATE: &str =
        "tt_L1_c.rs:1:1: error[E0463]: can't find crate for `foo`: can't find crate";
    const RUST_SYNTAX: &str = "tt_L1_d.rs:3:18: error: mismatched closing delimiter: `}`: mismatched closing delimiter, unclosed delimiter";

    /// Like the executor's `is_test_path`, including its taste for the layer's name, which the
    /// runners' mirror folders (`python-L1-unit`) also carry.
    fn is_test(p: &str) -> bool {
        let name = p.rsplit('/').next().unwrap_or(p);
        p.contains("L1-unit")
            || p.starts_with("tests/")
            || p.contains("/tests/")
            || name.starts_with("test_")
            || name.contains(".test.")
    }

    /// A repository holding `files` (path, contents).
    fn repo(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("tempdir");
        for (path, text) in files {
            let p = dir.path().join(path);
            if let Some(parent) = p.parent() {
                std::fs::create_dir_all(parent).expect("mkdir");
            }
            std::fs::write(p, text).expect("write");
        }
        dir
    }

    fn judge(file: &str, error: &str, repo: &Path) -> LoadVerdict {
        let le = LoadError {
            file: file.into(),
            error: error.into(),
            verdict: None,
        };
        classify_load_error(&le, repo, is_test)
    }

    const CALC: [(&str, &str); 2] = [
        ("calc/__init__.py", ""),
        ("calc/ops.py", "def add(a, b):\n    return a + b\n"),
    ];

    #[test]
    fn a_module_that_exists_nowhere_is_a_test_defect() {
        let r = repo(&CALC);
        let v = judge("test_calc.py", NOWHERE, r.path());
        assert_eq!(v.verdict.classification, Classification::TestDefect);
        assert_eq!(v.verdict.location.as_deref(), Some("test_calc.py:3"));
        assert_eq!(v.verdict.error, "ModuleNotFoundError");
        assert!(v.verdict.reason.contains("`nosuchmodule`"), "{v:?}");
        assert_eq!(v.install, None);
    }

    #[test]
    fn an_undeclared_uninstalled_package_the_test_imports_is_a_test_defect() {
        let r = repo(&[("requirements.txt", "requests>=2\n")]);
        let v = judge("test_calc.py", TEST_NEEDS_NUMPY, r.path());
        assert_eq!(v.verdict.classification, Classification::TestDefect);
        assert!(
            v.verdict.reason.contains("not a declared dependency")
                || v.verdict.reason.contains("nor a declared dependency"),
            "{}",
            v.verdict.reason
        );
    }

    #[test]
    fn a_package_requirements_txt_declares_is_an_env_issue() {
        let r = repo(&[(
            "requirements.txt",
            "# runtime\nrequests>=2.31  # http\nnumpy==1.26.4 ; python_version < \"3.13\"\n",
        )]);
        let v = judge("test_calc.py", TEST_NEEDS_NUMPY, r.path());
        assert_eq!(v.verdict.classification, Classification::EnvIssue);
        assert_eq!(v.verdict.criticality, Criticality::Medium);
        // The file by its absolute path: the command works from any folder.
        let file = r.path().join("requirements.txt");
        assert_eq!(
            v.install,
            Some(format!("python3 -m pip install -r {}", file.display()))
        );
        assert!(
            v.verdict.reason.contains("requirements.txt"),
            "{}",
            v.verdict.reason
        );
    }

    #[test]
    fn a_dev_requirements_file_is_named_in_the_command() {
        let r = repo(&[
            ("requirements.txt", "requests\n"),
            (
                "requirements-dev.txt",
                "-r requirements.txt\npytest\nNumPy\n",
            ),
        ]);
        let v = judge("test_calc.py", TEST_NEEDS_NUMPY, r.path());
        let file = r.path().join("requirements-dev.txt");
        assert_eq!(
            v.install,
            Some(format!("python3 -m pip install -r {}", file.display()))
        );
    }

    #[test]
    fn pyproject_dependencies_map_import_names_to_distributions() {
        let pyproject = "[project]\nname = \"img\"\ndependencies = [\"requests\"]\n\n[project.optional-dependencies]\ntest = [\"pytest>=8\", \"pillow[avif]>=10\"]\n";
        let r = repo(&[("pyproject.toml", pyproject)]);
        let v = judge("test_img.py", TEST_NEEDS_PIL, r.path());
        assert_eq!(v.verdict.classification, Classification::EnvIssue);
        assert_eq!(
            v.install.as_deref(),
            Some("python3 -m pip install 'pillow[avif]>=10'")
        );
        assert!(
            v.verdict.reason.contains("pyproject.toml"),
            "{}",
            v.verdict.reason
        );
    }

    #[test]
    fn setup_cfg_install_requires_counts_as_declared() {
        let cfg = "[metadata]\nname = calc\n\n[options]\npackages = find:\ninstall_requires =\n    requests\n    numpy>=1.24\n";
        let r = repo(&[("setup.cfg", cfg)]);
        let v = judge("test_calc.py", TEST_NEEDS_NUMPY, r.path());
        assert_eq!(v.verdict.classification, Classification::EnvIssue);
        assert_eq!(
            v.install.as_deref(),
            Some("python3 -m pip install 'numpy>=1.24'")
        );
    }

    #[test]
    fn a_package_the_projects_own_code_imports_is_an_env_issue() {
        let r = repo(&[
            ("calc/__init__.py", ""),
            ("calc/stats.py", "import numpy\n"),
        ]);
        let v = judge("test_stats.py", CODE_NEEDS_NUMPY, r.path());
        assert_eq!(v.verdict.classification, Classification::EnvIssue);
        assert_eq!(v.verdict.location.as_deref(), Some("calc/stats.py:1"));
        assert_eq!(v.install.as_deref(), Some("python3 -m pip install numpy"));
        assert!(
            v.verdict.reason.contains("calc/stats.py:1"),
            "{}",
            v.verdict.reason
        );
    }

    #[test]
    fn the_project_needing_pil_installs_pillow() {
        let text = CODE_NEEDS_NUMPY
            .replace("import numpy", "from PIL import Image")
            .replace("'numpy'", "'PIL'");
        let r = repo(&[("calc/__init__.py", ""), ("calc/stats.py", "")]);
        let v = judge("test_stats.py", &text, r.path());
        assert_eq!(v.install.as_deref(), Some("python3 -m pip install Pillow"));
    }

    #[test]
    fn a_dependency_an_installed_package_lacks_is_an_env_issue() {
        let text = "ImportError while importing test module '/s/tests/L1-unit/test_frame.py'.
Hint: make sure your test modules/packages have valid Python names.
Traceback:
/usr/lib/python3.11/importlib/__init__.py:126: in import_module
    return _bootstrap._gcd_import(name[level:], package, level)
test_frame.py:1: in <module>
    import pandas
/usr/lib/python3.11/site-packages/pandas/__init__.py:16: in <module>
    import pytz
E   ModuleNotFoundError: No module named 'pytz'";
        let r = repo(&CALC);
        let v = judge("test_frame.py", text, r.path());
        assert_eq!(v.verdict.classification, Classification::EnvIssue);
        assert_eq!(v.install.as_deref(), Some("python3 -m pip install pytz"));
        assert!(
            v.verdict
                .reason
                .contains("site-packages/pandas/__init__.py"),
            "{}",
            v.verdict.reason
        );
    }

    #[test]
    fn a_module_in_the_repository_imported_wrongly_is_a_test_defect() {
        let r = repo(&[
            ("app/__init__.py", ""),
            ("app/inventory/__init__.py", ""),
            ("app/inventory/pricing.py", "def total(): ...\n"),
            (".venv/lib/inventory/__init__.py", ""),
        ]);
        let v = judge("test_pricing.py", IN_REPO, r.path());
        assert_eq!(v.verdict.classification, Classification::TestDefect);
        assert!(
            v.verdict.reason.contains("app/inventory/__init__.py")
                && v.verdict.reason.contains("`app.inventory`"),
            "{}",
            v.verdict.reason
        );
    }

    #[test]
    fn a_module_under_a_folder_that_is_no_identifier_needs_sys_path() {
        let r = repo(&[("my-service/inventory/__init__.py", "")]);
        let v = judge("test_pricing.py", IN_REPO, r.path());
        assert_eq!(v.verdict.classification, Classification::TestDefect);
        assert!(
            v.verdict.reason.contains("put my-service/ on sys.path"),
            "{}",
            v.verdict.reason
        );
    }

    #[test]
    fn a_submodule_the_project_lacks_is_a_test_defect() {
        let r = repo(&CALC);
        let v = judge("test_sub.py", NO_SUBMODULE, r.path());
        assert_eq!(v.verdict.classification, Classification::TestDefect);
        assert!(
            v.verdict.reason.contains("calc/__init__.py"),
            "{}",
            v.verdict.reason
        );
    }

    #[test]
    fn a_syntax_error_in_the_projects_code_is_a_high_code_defect() {
        let r = repo(&[
            ("calc/__init__.py", ""),
            ("calc/core.py", "x = 1\n\ndef add(a, b:\n"),
        ]);
        let v = judge("test_calc.py", CODE_SYNTAX, r.path());
        assert_eq!(v.verdict.classification, Classification::CodeDefect);
        assert_eq!(v.verdict.criticality, Criticality::High);
        assert_eq!(v.verdict.location.as_deref(), Some("calc/core.py:3"));
        assert_eq!(v.verdict.error, "SyntaxError");
        assert!(
            v.verdict.reason.contains("'(' was never closed"),
            "{}",
            v.verdict.reason
        );
    }

    #[test]
    fn a_syntax_error_in_the_test_file_is_a_test_defect() {
        let r = repo(&CALC);
        for (text, kind, loc) in [
            (TEST_SYNTAX, "SyntaxError", "test_calc.py:1"),
            (TEST_INDENT, "IndentationError", "test_calc.py:3"),
        ] {
            let v = judge("test_calc.py", text, r.path());
            assert_eq!(v.verdict.classification, Classification::TestDefect);
            assert_eq!(v.verdict.error, kind);
            assert_eq!(v.verdict.location.as_deref(), Some(loc));
        }
    }

    #[test]
    fn an_error_raised_while_importing_the_code_is_a_code_defect() {
        let r = repo(&[
            ("calc/__init__.py", ""),
            ("calc/config.py", "RATE = int(\"x\")\n"),
        ]);
        let v = judge("test_calc.py", CODE_RAISES, r.path());
        assert_eq!(v.verdict.classification, Classification::CodeDefect);
        assert_eq!(v.verdict.location.as_deref(), Some("calc/config.py:1"));
        assert_eq!(v.verdict.error, "ValueError");
    }

    #[test]
    fn missing_pytest_stays_an_env_issue() {
        let r = repo(&[]);
        let v = judge(
            "test_calc.py",
            "/usr/bin/python3: No module named 'pytest'",
            r.path(),
        );
        assert_eq!(v.verdict.classification, Classification::EnvIssue);
    }

    #[test]
    fn node_packages_declared_or_needed_by_the_project_are_env_issues() {
        let util = ("src/util.js", "const _ = require('lodash');\n");
        let declared = repo(&[
            (
                "package.json",
                r#"{"name":"u","dependencies":{"lodash":"^4.17.21"}}"#,
            ),
            util,
        ]);
        let v = judge("util.test.js", NODE_CODE_NEEDS_LODASH, declared.path());
        assert_eq!(v.verdict.classification, Classification::EnvIssue);
        assert_eq!(
            v.install,
            Some(format!(
                "npm install --prefix {}",
                declared.path().display()
            ))
        );
        let undeclared = repo(&[("package.json", r#"{"name":"u"}"#), util]);
        let v = judge("util.test.js", NODE_CODE_NEEDS_LODASH, undeclared.path());
        assert_eq!(v.verdict.classification, Classification::EnvIssue);
        assert_eq!(
            v.install,
            Some(format!(
                "npm install --prefix {} lodash",
                undeclared.path().display()
            ))
        );
        assert!(
            v.verdict.reason.contains("src/util.js"),
            "{}",
            v.verdict.reason
        );
    }

    #[test]
    fn a_node_package_only_the_test_wants_is_a_test_defect() {
        let r = repo(&[(
            "package.json",
            r#"{"name":"u","devDependencies":{"c8":"^9"}}"#,
        )]);
        let v = judge("util.test.mjs", NODE_TEST_NEEDS_PKG, r.path());
        assert_eq!(v.verdict.classification, Classification::TestDefect);
        assert!(
            v.verdict.reason.contains("`leftpadx`"),
            "{}",
            v.verdict.reason
        );
        assert_eq!(v.verdict.error, "ERR_MODULE_NOT_FOUND");
        assert_eq!(v.install, None);
    }

    #[test]
    fn a_wrong_relative_import_names_where_the_file_is() {
        let r = repo(&[("lib/strings.js", "export const f = 1;\n")]);
        let v = judge("util.test.mjs", NODE_RELATIVE, r.path());
        assert_eq!(v.verdict.classification, Classification::TestDefect);
        assert!(
            v.verdict.reason.contains("lib/strings.js"),
            "{}",
            v.verdict.reason
        );
    }

    #[test]
    fn a_node_syntax_error_in_the_test_is_a_test_defect() {
        let r = repo(&[]);
        let v = judge("util.test.js", NODE_SYNTAX, r.path());
        assert_eq!(v.verdict.classification, Classification::TestDefect);
        assert_eq!(v.verdict.location.as_deref(), Some("util.test.js:2"));
    }

    #[test]
    fn unresolved_rust_imports_are_test_defects() {
        let cargo = "[package]\nname = \"geom\"\nversion = \"0.1.0\"\n\n[dev-dependencies]\nserde_json = \"1\"\n";
        let r = repo(&[("Cargo.toml", cargo), ("src/lib.rs", "")]);
        let v = judge("tt_L1_a.rs", RUST_UNDECLARED, r.path());
        assert_eq!(v.verdict.classification, Classification::TestDefect);
        assert_eq!(v.verdict.location.as_deref(), Some("tt_L1_a.rs:1"));
        assert_eq!(v.verdict.error, "E0432");
        assert!(
            v.verdict.reason.contains("`serde_yaml`") && v.verdict.reason.contains("Cargo.toml"),
            "{}",
            v.verdict.reason
        );
        let v = judge("tt_L1_b.rs", RUST_NO_ITEM, r.path());
        assert!(
            v.verdict.reason.contains("`geom::nosuch`")
                && v.verdict.reason.contains("does not exist"),
            "{}",
            v.verdict.reason
        );
        let v = judge("tt_L1_c.rs", RUST_NO_CRATE, r.path());
        assert_eq!(v.verdict.classification, Classification::TestDefect);
        assert_eq!(v.verdict.error, "E0463");
    }

    #[test]
    fn a_rust_test_that_does_not_compile_is_a_test_defect() {
        let r = repo(&[("Cargo.toml", "[package]\nname = \"geom\"\n")]);
        let v = judge("tt_L1_d.rs", RUST_SYNTAX, r.path());
        assert_eq!(v.verdict.classification, Classification::TestDefect);
        assert_eq!(v.verdict.location.as_deref(), Some("tt_L1_d.rs:3"));
        assert_eq!(v.verdict.error, "compile error");
    }

    #[test]
    fn requirement_names_are_compared_as_pep_503_says() {
        assert_eq!(normalise("Python_Dateutil"), "python-dateutil");
        assert_eq!(normalise("ruamel.yaml"), "ruamel-yaml");
        assert_eq!(normalise("a-_.b"), "a-b");
        assert_eq!(
            requirement_name("PyYAML[libyaml]>=6.0 ; sys_platform != 'win32'"),
            "PyYAML"
        );
        assert_eq!(requirement_name("requests @ https://x/r.whl"), "requests");
        assert_eq!(distribution("yaml"), "PyYAML");
        assert_eq!(distribution("google.protobuf.message"), "protobuf");
        assert_eq!(distribution("sklearn.linear_model"), "scikit-learn");
        assert_eq!(distribution("numpy"), "numpy");
    }

    #[test]
    fn poetry_and_dependency_groups_are_read() {
        let pyproject = "[tool.poetry.dependencies]\npython = \"^3.11\"\nPyYAML = \"^6\"\n\n[tool.poetry.group.test.dependencies]\nhypothesis = \"*\"\n\n[dependency-groups]\ndev = [\"ruff\", {include-group = \"test\"}]\n";
        let reqs = pyproject_requirements(pyproject);
        for want in ["PyYAML", "hypothesis", "ruff"] {
            assert!(reqs.iter().any(|r| r == want), "{want} in {reqs:?}");
        }
        assert!(!reqs.iter().any(|r| r == "python"));
    }

    #[test]
    fn a_load_verdict_serialises_flat() {
        let r = repo(&[("requirements.txt", "numpy\n")]);
        let v = judge("test_calc.py", TEST_NEEDS_NUMPY, r.path());
        let json = serde_json::to_value(&v).expect("json");
        assert_eq!(json["classification"], "env_issue");
        assert_eq!(
            json["install"],
            format!(
                "python3 -m pip install -r {}",
                r.path().join("requirements.txt").display()
            )
        );
        let back: LoadVerdict = serde_json::from_value(json).expect("back");
        assert_eq!(back, v);
    }
}
