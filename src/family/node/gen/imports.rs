//! The project files a JavaScript module reads: what its relative `import`/`require` names,
//! resolved the way Node does (the exact file, then with an extension, then a folder's index).

use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;

/// `from './x'`, `import './x'`, `import('./x')`, `require('./x')`, `export … from '../x'`.
static RELATIVE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?:\bfrom|\bimport|\brequire)\s*\(?\s*['"](\.{1,2}/[^'"]*)['"]"#)
        .expect("a valid pattern")
});

const RESOLVED: [&str; 7] = ["", ".js", ".mjs", ".cjs", ".ts", ".mts", ".json"];

/// The files among `sources` (and the package manifest) that `file` imports directly.
pub fn imports(repo: &Path, file: &str, sources: &[String]) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(repo.join(file)) else {
        return Vec::new();
    };
    let dir = Path::new(file).parent().unwrap_or(Path::new(""));
    let mut out = vec!["package.json".to_string()];
    for spec in RELATIVE.captures_iter(&text).map(|c| c[1].to_string()) {
        let joined = normalise(&dir.join(&spec));
        let candidates = RESOLVED
            .iter()
            .map(|x| format!("{joined}{x}"))
            .chain(RESOLVED[1..].iter().map(|x| format!("{joined}/index{x}")));
        if let Some(found) = candidates
            .into_iter()
            .find(|c| sources.contains(c) || (!c.is_empty() && repo.join(c).is_file()))
        {
            out.push(found);
        }
    }
    out.sort();
    out.dedup();
    out
}

/// `a/b/../c/./d` -> `a/c/d`, as a relative path with `/`.
fn normalise(path: &Path) -> String {
    let mut parts: Vec<String> = Vec::new();
    for c in path.components() {
        match c {
            std::path::Component::ParentDir => {
                parts.pop();
            }
            std::path::Component::Normal(p) => parts.push(p.to_string_lossy().into_owned()),
            _ => {}
        }
    }
    parts.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_imports_resolve_as_node_resolves_them() {
        let repo = tempfile::tempdir().unwrap();
        let files = [
            ("package.json", "{}"),
            (
                "src/a.js",
                "import x from './b';\nconst y = require(\"../lib/c.cjs\");\nimport fs from 'fs';\nexport * from './d';\n",
            ),
            ("src/b.js", ""),
            ("lib/c.cjs", ""),
            ("src/d/index.js", ""),
        ];
        for (f, text) in files {
            std::fs::create_dir_all(repo.path().join(f).parent().unwrap()).unwrap();
            std::fs::write(repo.path().join(f), text).unwrap();
        }
        let sources: Vec<String> = files[1..].iter().map(|(f, _)| f.to_string()).collect();
        assert_eq!(
            imports(repo.path(), "src/a.js", &sources),
            ["lib/c.cjs", "package.json", "src/b.js", "src/d/index.js"]
        );
    }
}
