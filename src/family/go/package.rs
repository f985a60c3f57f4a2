//! Where a generated Go test belongs: `go test` only runs a `*_test.go` file in its package's
//! folder, so the file's `package` clause (`calc` or `calc_test`) picks the folder whose code
//! declares that package.

use std::collections::BTreeMap;
use std::path::Path;

use crate::workspace::list_files;

/// Folders the go tool ignores, or that hold other modules' code.
fn ignored(dir: &str) -> bool {
    dir.split('/')
        .any(|part| part == "vendor" || part == "testdata" || part.starts_with(['.', '_']))
}

/// The module path `go.mod` declares (`module example.com/calc`).
pub(super) fn module_path(repo: &Path) -> Option<String> {
    let text = std::fs::read_to_string(repo.join("go.mod")).ok()?;
    text.lines().find_map(|line| {
        let line = line.split("//").next().unwrap_or("");
        let rest = line.trim().strip_prefix("module")?;
        let path = rest.trim().trim_matches('"');
        (!path.is_empty() && rest.starts_with([' ', '\t'])).then(|| path.to_string())
    })
}

/// The package a Go source declares: the first `package <name>` line outside comments.
pub(super) fn package_clause(text: &str) -> Option<&str> {
    let mut in_block = false;
    for line in text.lines() {
        let line = line.trim();
        if in_block {
            in_block = !line.contains("*/");
            continue;
        }
        if line.starts_with("/*") {
            in_block = !line.contains("*/");
            continue;
        }
        if line.is_empty() || line.starts_with("//") {
            continue;
        }
        let name = line.strip_prefix("package")?.trim();
        let name = name.split([' ', '\t', '/']).next().unwrap_or("");
        return (!name.is_empty()).then_some(name);
    }
    None
}

/// The repository's Go packages: folder (relative, `""` for the root) -> package name, from its
/// non-test sources.
pub(super) fn packages(repo: &Path) -> BTreeMap<String, String> {
    let mut found = BTreeMap::new();
    let _ = list_files(repo, Path::new(""), None, &mut |rel, abs| {
        let name = rel.file_name().map(|n| n.to_string_lossy().into_owned());
        if !name.is_some_and(|n| n.ends_with(".go") && !n.ends_with("_test.go")) {
            return;
        }
        let dir = rel
            .parent()
            .map(|d| d.to_string_lossy().into_owned())
            .unwrap_or_default();
        if ignored(&dir) || found.contains_key(&dir) {
            return;
        }
        if let Some(pkg) = std::fs::read_to_string(&abs)
            .ok()
            .as_deref()
            .and_then(package_clause)
        {
            found.insert(dir, pkg.to_string());
        }
    });
    found
}

/// The folder (relative to the module root, `""` for the root) a test declaring `package
/// <name>` or `package <name>_test` belongs in: for an external test, the folder of that name
/// whose import path (`module`/folder) it imports; else the shallowest folder of that package,
/// the root when none declares it.
pub(super) fn package_dir(
    packages: &BTreeMap<String, String>,
    module: Option<&str>,
    test_source: &str,
) -> String {
    let Some(declared) = package_clause(test_source) else {
        return String::new();
    };
    let name = declared.strip_suffix("_test").unwrap_or(declared);
    if let (Some(module), true) = (module, declared.ends_with("_test")) {
        let imported = packages.iter().find(|(dir, pkg)| {
            let path = match dir.as_str() {
                "" => module.to_string(),
                d => format!("{module}/{d}"),
            };
            *pkg == name && test_source.contains(&format!("\"{path}\""))
        });
        if let Some((dir, _)) = imported {
            return dir.clone();
        }
    }
    packages
        .iter()
        .filter(|(_, pkg)| *pkg == name)
        .map(|(dir, _)| dir)
        .min_by_key(|dir| {
            (
                dir.matches('/').count() + usize::from(!dir.is_empty()),
                *dir,
            )
        })
        .cloned()
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_test_goes_to_the_folder_of_its_package() {
        let dir = tempfile::tempdir().unwrap();
        let write = |rel: &str, text: &str| {
            let path = dir.path().join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        write(
            "go.mod",
            "// comment\nmodule example.com/calc // the module\n\ngo 1.19\n",
        );
        write("calc.go", "// Package calc.\npackage calc\n");
        write("stats/mean.go", "/* a\n package nope */\npackage stats\n");
        write("cmd/tool/main.go", "package main\n");
        write("vendor/x/y.go", "package stats\n");
        write("internal/stats/s.go", "package stats\n");
        assert_eq!(module_path(dir.path()).as_deref(), Some("example.com/calc"));
        let found = packages(dir.path());
        assert_eq!(found.get("stats/mean.go"), None);
        assert_eq!(found["stats"], "stats");
        assert!(!found.contains_key("vendor/x"));
        assert_eq!(package_dir(&found, None, "package calc\n"), "");
        assert_eq!(package_dir(&found, None, "package stats_test\n"), "stats");
        // An external test of the package it imports, among two of one name.
        let internal = "package stats_test\n\nimport \"example.com/calc/internal/stats\"\n";
        assert_eq!(
            package_dir(&found, Some("example.com/calc"), internal),
            "internal/stats"
        );
        assert_eq!(
            package_dir(&found, None, "// x\npackage main\n"),
            "cmd/tool"
        );
        assert_eq!(package_dir(&found, None, "package elsewhere\n"), "");
        assert_eq!(package_clause("no clause"), None);
    }
}
