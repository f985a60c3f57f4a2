//! Where in the repository a finding is: the file of a module or of a test's code under test,
//! the line a function is defined on, a path the runs saw in a mirror made repository-relative.
//! The SARIF results and the pull-request summary point at the user's files with it, never at
//! the session's copies.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The repository's files, listed once, and what can be read of them.
pub struct Locator {
    repo: PathBuf,
    files: OnceLock<Vec<String>>,
}

/// A place in the repository: a relative path with `/`, and a line when one is known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    pub file: String,
    pub line: Option<u32>,
}

impl Locator {
    pub fn new(repo: &Path) -> Self {
        Locator {
            repo: repo.to_path_buf(),
            files: OnceLock::new(),
        }
    }

    fn files(&self) -> &[String] {
        self.files.get_or_init(|| {
            let mut out = Vec::new();
            let _ = crate::workspace::list_files(&self.repo, Path::new(""), None, &mut |rel, _| {
                out.push(rel.to_string_lossy().replace('\\', "/"));
            });
            out.sort();
            out
        })
    }

    /// The repository's first source file, in path order (tests and documents left out).
    pub fn first_file(&self) -> Option<String> {
        let code = |f: &&String| !is_test_path(f) && !f.ends_with(".md") && !f.starts_with('.');
        self.files().iter().find(code).cloned()
    }

    fn is_file(&self, rel: &str) -> bool {
        self.files()
            .binary_search_by(|f| f.as_str().cmp(rel))
            .is_ok()
    }

    /// `path[:line]` as the runs wrote it (relative, absolute in the repository, or in one of the
    /// session's mirrors `…/workspace/<mirror>/rel`) as a repository file, when it is one.
    pub fn path(&self, text: &str) -> Option<Place> {
        let (path, line) = match text.rsplit_once(':') {
            Some((p, l)) if l.parse::<u32>().is_ok() => (p, l.parse().ok()),
            _ => (text, None),
        };
        let path = path.trim();
        let rel = if let Ok(inside) = Path::new(path).strip_prefix(&self.repo) {
            inside.to_string_lossy().into_owned()
        } else if let Some((_, after)) = path.split_once("/workspace/") {
            // `<session>/workspace/<mirror>/<rel>`: the mirror's own folder first.
            after.split_once('/').map(|(_, rel)| rel.to_string())?
        } else {
            path.trim_start_matches("./").to_string()
        };
        self.is_file(&rel).then_some(Place { file: rel, line })
    }

    /// The file of a module: a repository path already, or a dotted Python module (`pkg.mod`:
    /// `pkg/mod.py` or `pkg/mod/__init__.py`, under the root or a `src/` or `lib/` folder).
    pub fn module(&self, module: &str) -> Option<String> {
        if self.is_file(module) {
            return Some(module.to_string());
        }
        let dotted = module.replace('.', "/");
        let python = [
            format!("{dotted}.py"),
            format!("{dotted}/__init__.py"),
            format!("src/{dotted}.py"),
            format!("src/{dotted}/__init__.py"),
            format!("lib/{dotted}.py"),
        ];
        if let Some(found) = python.into_iter().find(|c| self.is_file(c)) {
            return Some(found);
        }
        // JavaScript's `a/b` (src/ or lib/ left out), Rust's `crate::a::b`, Go's package folder.
        let path = module.trim_start_matches("crate::").replace("::", "/");
        for dir in ["", "src/", "lib/"] {
            for ext in ["js", "mjs", "cjs", "ts", "tsx", "jsx", "rs", "go"] {
                let candidate = format!("{dir}{path}.{ext}");
                if self.is_file(&candidate) {
                    return Some(candidate);
                }
            }
            let folder = format!("{dir}{path}/");
            if let Some(first) = self
                .files()
                .iter()
                .filter(|f| f.starts_with(&folder) && !f[folder.len()..].contains('/'))
                .find(|f| (f.ends_with(".go") || f.ends_with("/mod.rs")) && !is_test_path(f))
            {
                return Some(first.clone());
            }
        }
        None
    }

    /// A module and the line its function is defined on, when the file shows it.
    pub fn function(&self, module: &str, function: &str) -> Option<Place> {
        let file = self.module(module)?;
        let line = self.definition_line(&file, function);
        Some(Place { file, line })
    }

    /// The code a generated test file tests: `test_pkg_mod.py` tests `pkg/mod.py`
    /// (`pkg_mod.py` too); `m.test.js` tests `m.js`; `x_test.go` the package beside it.
    pub fn tested_by(&self, test_file: &str) -> Option<String> {
        let name = Path::new(test_file)
            .file_name()?
            .to_string_lossy()
            .into_owned();
        if let Some(stem) = name
            .strip_prefix("test_")
            .and_then(|n| n.strip_suffix(".py"))
        {
            return self
                .files()
                .iter()
                .filter(|f| f.ends_with(".py") && !is_test_path(f))
                .find(|f| {
                    let mangled = f.trim_end_matches(".py").replace('/', "_");
                    let mangled = mangled.trim_end_matches("___init__");
                    mangled == stem || mangled.strip_prefix("src_") == Some(stem)
                })
                .cloned();
        }
        for (test, code) in [
            (".test.js", ".js"),
            (".test.ts", ".ts"),
            (".spec.js", ".js"),
            (".spec.ts", ".ts"),
            (".test.mjs", ".mjs"),
            (".test.cjs", ".cjs"),
        ] {
            if let Some(stem) = name.strip_suffix(test) {
                let want = format!("{stem}{code}");
                return self
                    .files()
                    .iter()
                    .find(|f| f.rsplit('/').next() == Some(want.as_str()) && !is_test_path(f))
                    .cloned();
            }
        }
        None
    }

    /// The line `function` (its last dotted or `::` segment) is defined on in `file`.
    pub fn definition_line(&self, file: &str, function: &str) -> Option<u32> {
        let short = function
            .rsplit(['.', ':'])
            .next()
            .filter(|s| !s.is_empty())?;
        let text = std::fs::read_to_string(self.repo.join(file)).ok()?;
        let name = regex::escape(short);
        let definition = regex::Regex::new(&format!(
            r"^\s*(?:export\s+)?(?:pub(?:\([a-z]+\))?\s+)?(?:async\s+)?(?:def|function\*?|fn|class|func(?:\s*\([^)]*\))?)\s+{name}\b|^\s*(?:export\s+)?(?:const|let|var)\s+{name}\s*="
        ))
        .ok()?;
        text.lines()
            .position(|l| definition.is_match(l))
            .map(|i| i as u32 + 1)
    }
}

/// A project's own test file (`tests/…`, `test_x.py`): not the code a finding is about.
fn is_test_path(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    path.starts_with("tests/")
        || path.contains("/tests/")
        || name.starts_with("test_")
        || name.ends_with("_test.py")
        || name.ends_with("_test.go")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn findings_map_to_repository_files_and_definition_lines() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path();
        for (rel, text) in [
            ("shapes/__init__.py", ""),
            (
                "shapes/geometry.py",
                "import math\n\n\ndef perimeter(a, b):\n    return a\n",
            ),
            ("tests/test_geometry.py", "def test_x():\n    pass\n"),
            (
                "lib/range.js",
                "const x = 1;\nexport function satisfies(v) {}\n",
            ),
            (
                "stack/stack.go",
                "package stack\n\nfunc (s *Stack) Pop() int {\n",
            ),
        ] {
            std::fs::create_dir_all(repo.join(rel).parent().unwrap()).unwrap();
            std::fs::write(repo.join(rel), text).unwrap();
        }
        let at = Locator::new(repo);
        assert_eq!(
            at.function("shapes.geometry", "shapes.geometry.perimeter"),
            Some(Place {
                file: "shapes/geometry.py".into(),
                line: Some(4)
            })
        );
        assert_eq!(at.module("shapes"), Some("shapes/__init__.py".into()));
        assert_eq!(
            at.tested_by("test_shapes_geometry.py"),
            Some("shapes/geometry.py".into())
        );
        assert_eq!(at.tested_by("range.test.js"), Some("lib/range.js".into()));
        assert_eq!(at.module("range"), Some("lib/range.js".into()));
        assert_eq!(at.module("stack"), Some("stack/stack.go".into()));
        assert_eq!(at.definition_line("lib/range.js", "satisfies"), Some(2));
        assert_eq!(at.definition_line("stack/stack.go", "stack.Pop"), Some(3));
        let mirrored = "/x/S/workspace/python-L1-unit/shapes/geometry.py:5";
        assert_eq!(
            at.path(mirrored),
            Some(Place {
                file: "shapes/geometry.py".into(),
                line: Some(5)
            })
        );
        let inside = format!("{}:2", repo.join("lib/range.js").display());
        assert_eq!(at.path(&inside).unwrap().file, "lib/range.js");
        assert_eq!(at.path("/elsewhere/test_x.py:3"), None);
    }
}
