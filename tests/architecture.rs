//! ARCHITECTURE.md checked against the code: its layers, read from the imports, with no circle
//! between top-level modules nor between the files of one folder; every folder and top-level
//! file named; and the limits the shape keeps (file length, no `Result<_, String>`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn architecture() -> String {
    std::fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md")
}

/// Every `.rs` file under src/, relative to src/.
fn sources() -> Vec<PathBuf> {
    fn walk(dir: &Path, base: &Path, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                walk(&path, base, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path.strip_prefix(base).unwrap().to_path_buf());
            }
        }
    }
    let src = root().join("src");
    let mut out = Vec::new();
    walk(&src, &src, &mut out);
    out
}

/// The code of a file without its comment lines (doc links name modules they do not import).
fn code(rel: &Path) -> String {
    std::fs::read_to_string(root().join("src").join(rel))
        .unwrap()
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The top-level module a file belongs to: `testing/node/run.rs` -> `testing`, `util.rs` -> `util`.
fn top_module(rel: &Path) -> String {
    let first = rel
        .components()
        .next()
        .unwrap()
        .as_os_str()
        .to_string_lossy();
    first.trim_end_matches(".rs").to_string()
}

/// The identifiers following each `prefix` in `text` (`crate::` -> the module named next).
fn names_after<'a>(text: &'a str, prefix: &str) -> Vec<&'a str> {
    text.match_indices(prefix)
        .map(|(i, _)| {
            let rest = &text[i + prefix.len()..];
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            &rest[..end]
        })
        .filter(|n| !n.is_empty())
        .collect()
}

/// Top-level module -> the top-level modules its files import.
fn module_imports() -> BTreeMap<String, BTreeMap<String, BTreeSet<String>>> {
    let mut graph: BTreeMap<String, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for rel in sources() {
        let from = top_module(&rel);
        if from == "main" || from == "lib" {
            continue;
        }
        let text = code(&rel);
        for to in names_after(&text, "crate::") {
            if to != from {
                graph
                    .entry(from.clone())
                    .or_default()
                    .entry(to.to_string())
                    .or_default()
                    .insert(rel.display().to_string());
            }
        }
    }
    graph
}

/// The layers ARCHITECTURE.md lists, top first: the lines of the fenced block after "## Layers".
fn layers() -> Vec<String> {
    let doc = architecture();
    let section = doc
        .split("\n## Layers")
        .nth(1)
        .expect("ARCHITECTURE.md has a \"## Layers\" section");
    let block = section
        .split("```")
        .nth(1)
        .expect("a fenced list of layers");
    block
        .lines()
        .map(|l| l.split('#').next().unwrap().trim())
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

#[test]
fn every_import_goes_down_the_layers_architecture_md_lists() {
    let order = layers();
    let modules: BTreeSet<String> = sources().iter().map(|r| top_module(r)).collect();
    for m in modules.iter().filter(|m| *m != "main" && *m != "lib") {
        assert!(
            order.contains(m),
            "src/{m} is not among ARCHITECTURE.md's layers: {order:?}"
        );
    }
    let rank: BTreeMap<&str, usize> = order
        .iter()
        .enumerate()
        .map(|(i, m)| (m.as_str(), i))
        .collect();
    let mut upward = Vec::new();
    for (from, targets) in module_imports() {
        for (to, files) in targets {
            let (Some(a), Some(b)) = (rank.get(from.as_str()), rank.get(to.as_str())) else {
                continue;
            };
            if b <= a {
                upward.push(format!("{from} -> {to} ({files:?})"));
            }
        }
    }
    assert!(
        upward.is_empty(),
        "imports that climb the layers (a module uses only those listed below it):\n{}",
        upward.join("\n")
    );
}

#[test]
fn the_must_not_import_rules_hold() {
    let doc = architecture();
    let graph = module_imports();
    let mut checked = 0;
    let prose = doc.replace('\n', " ");
    for sentence in prose.split(". ") {
        let Some((subject, rest)) = sentence.split_once(" must not import ") else {
            continue;
        };
        let Some(from) = names_after(subject, "`").last().map(|s| s.to_string()) else {
            continue;
        };
        for to in names_after(rest, "`") {
            checked += 1;
            let found = graph.get(&from).and_then(|t| t.get(to));
            assert!(
                found.is_none(),
                "ARCHITECTURE.md: `{from}` must not import `{to}`, but {found:?} do"
            );
        }
    }
    assert!(checked > 0, "no \"must not import\" rule found");
}

#[test]
fn no_two_files_of_a_folder_import_each_other_in_a_circle() {
    // Edges between sibling files (a folder's mod.rs is its face and is left out: it declares
    // and re-exports the files beside it).
    let files = sources();
    let mut edges: BTreeMap<PathBuf, BTreeSet<PathBuf>> = BTreeMap::new();
    for rel in &files {
        if rel.file_name().is_some_and(|n| n == "mod.rs") {
            continue;
        }
        let dir = rel.parent().unwrap_or(Path::new(""));
        let module_path: Vec<String> = rel
            .with_extension("")
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        // `super::x` in `a/b/c.rs` names `a/b/x`; `crate::a::b::x` too.
        let parent_path = module_path[..module_path.len() - 1].join("::");
        let text = code(rel);
        let mut named: BTreeSet<String> = names_after(&text, "super::")
            .into_iter()
            .map(str::to_string)
            .collect();
        let crate_prefix = if parent_path.is_empty() {
            "crate::".to_string()
        } else {
            format!("crate::{parent_path}::")
        };
        named.extend(
            names_after(&text, &crate_prefix)
                .into_iter()
                .map(str::to_string),
        );
        for name in named {
            let sibling = dir.join(format!("{name}.rs"));
            if sibling != *rel && files.contains(&sibling) {
                edges.entry(rel.clone()).or_default().insert(sibling);
            }
        }
    }
    // A circle is a file that reaches itself.
    for start in edges.keys() {
        let mut seen = BTreeSet::new();
        let mut stack: Vec<&PathBuf> = edges[start].iter().collect();
        while let Some(at) = stack.pop() {
            assert!(
                at != start,
                "{} imports itself through its siblings: {:?}",
                start.display(),
                edges
                    .iter()
                    .filter(|(from, _)| from.parent() == start.parent())
                    .collect::<Vec<_>>()
            );
            if seen.insert(at) {
                stack.extend(edges.get(at).into_iter().flatten());
            }
        }
    }
}

#[test]
fn every_folder_and_top_level_file_is_named_in_architecture_md() {
    let doc = architecture();
    let mut missing = Vec::new();
    for rel in sources() {
        let mut dir = rel.parent();
        while let Some(d) = dir.filter(|d| !d.as_os_str().is_empty()) {
            let named = format!("{}/", d.display());
            if !doc.contains(&format!("`{named}`")) && !doc.contains(&format!("`src/{named}`")) {
                missing.push(named);
            }
            dir = d.parent();
        }
        if rel.parent() == Some(Path::new("")) {
            let name = rel.display().to_string();
            if !doc.contains(&format!("`{name}`")) && !doc.contains(&format!("`src/{name}`")) {
                missing.push(name);
            }
        }
    }
    missing.sort();
    missing.dedup();
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md does not name (in backquotes, as a path under src/): {missing:?}"
    );
}

#[test]
fn no_source_file_is_over_900_lines_and_no_error_is_a_bare_string() {
    for rel in sources() {
        let text = std::fs::read_to_string(root().join("src").join(&rel)).unwrap();
        let lines = text.lines().count();
        assert!(
            lines <= 900,
            "src/{} has {lines} lines (900 at most, tests included)",
            rel.display()
        );
        for (no, line) in code(&rel).lines().enumerate() {
            let squeezed: String = line.chars().filter(|c| !c.is_whitespace()).collect();
            assert!(
                !(squeezed.contains("Result<") && squeezed.contains(",String>")),
                "src/{}: a Result whose error is a String (give it a thiserror type): {line}\n(line {} of the code without comments)",
                rel.display(),
                no + 1
            );
        }
    }
}
