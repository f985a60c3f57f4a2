//! Where things are in the repository: a module or file by name (a bounded walk), and whether a
//! path is the project's own code or an installed library's.

use std::collections::VecDeque;
use std::path::Path;

/// Bounds on the walk that looks for a module in the repository.
pub(super) const WALK_MAX_DEPTH: usize = 12;
pub(super) const WALK_MAX_ENTRIES: usize = 50_000;
pub(super) const SKIPPED_DIRS: [&str; 6] = [
    "node_modules",
    "target",
    "__pycache__",
    "venv",
    "site-packages",
    "dist-packages",
];

/// The shallowest file (relative to `repo`) that `found` accepts, skipping VCS, virtualenv,
/// build and dependency folders.
pub(super) fn walk(repo: &Path, found: impl Fn(&str) -> bool) -> Option<String> {
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
pub(super) fn find_python_module(repo: &Path, module: &str) -> Option<String> {
    let stem = module.replace('.', "/");
    let names = [format!("{stem}.py"), format!("{stem}/__init__.py")];
    walk(repo, |rel| {
        names
            .iter()
            .any(|n| rel == n || rel.ends_with(&format!("/{n}")))
    })
}

/// A file named `name` (with or without a JavaScript extension, or as a folder's index).
pub(super) fn find_node_file(repo: &Path, name: &str) -> Option<String> {
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
pub(super) fn in_repo(repo: &Path, path: &str) -> Option<String> {
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
pub(super) fn is_library(path: &str) -> bool {
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

pub(super) fn read_json(path: &Path) -> Option<serde_json::Value> {
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}

pub(super) fn read_toml(path: &Path) -> Option<toml::Value> {
    std::fs::read_to_string(path).ok()?.parse().ok()
}
