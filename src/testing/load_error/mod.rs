//! Why a test file does not even load (a pytest collection error, a `node --check` or module
//! resolution failure, a cargo build error), in the same classes as a failing test: a module that
//! exists nowhere or is imported wrongly is the test's fault, a declared or project-needed
//! third-party package that is not installed is the environment's (with the command that installs
//! it), a syntax error is the fault of whichever file does not parse. Everything else is what
//! [`classify`] says of the loader's text.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::classify::{classify, Classification, Criticality, Verdict};
use super::report::{TestCase, TestStatus};

mod declared;
mod repo;
#[cfg(test)]
mod tests;

use declared::*;
use repo::*;

/// A test file that does not even load (syntax error, failed import, build error).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadError {
    /// Relative to the layer's test folder.
    pub file: String,
    pub error: String,
    /// Why it does not load, in the classes of a failing test (set by the executor).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<LoadVerdict>,
}

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
