//! How an agent writes tests for a Go module: `_test.go` files whose package clause places them
//! (the runner puts each in its package's folder), and the static check in front of the
//! sandbox: a Go test reaches the file system, processes and the network through calls no
//! language hook sees, so a candidate that makes them is refused before it is compiled.

use std::path::Path;

use crate::family::agent::{
    code_only, Conventions, UnsafeCall, FILE_SYSTEM, NATIVE, NETWORK, PROCESS,
};

pub(super) fn conventions(repo: &Path) -> Conventions {
    let module = super::package::module_path(repo).unwrap_or_else(|| "example.com/module".into());
    let packages: Vec<String> = super::package::packages(repo)
        .into_iter()
        .map(|(dir, pkg)| {
            let import = if dir.is_empty() {
                module.clone()
            } else {
                format!("{module}/{dir}")
            };
            format!("`{pkg}` (import path `{import}`)")
        })
        .collect();
    Conventions {
        language: "Go",
        framework: "go test".into(),
        fence: "go",
        comment: "//",
        file_name: "<name>_test.go".into(),
        idioms: vec![
            format!(
                "The package clause places the file: `package <pkg>_test` (preferred: it imports the package by its import path) or `package <pkg>` for unexported names. The module's packages: {}.",
                packages.join(", ")
            ),
            "Write `func TestXxx(t *testing.T)` tests, table-driven with `t.Run` where there are several cases; compare with `==` or `reflect.DeepEqual`, check errors with `if err != nil`. Only the standard library and the module's own dependencies are available.".into(),
            "No `os/exec`, no `net`, no `unsafe` or cgo; write files only under `t.TempDir()`.".into(),
        ],
        is_test_file,
    }
}

fn is_test_file(name: &str) -> bool {
    name.ends_with("_test.go") && name.len() > "_test.go".len()
}

/// Imports a test may not make at all: processes, the network, native and unsafe code.
const FORBIDDEN_IMPORTS: &[(&str, &str)] = &[
    ("os/exec", PROCESS),
    ("os/signal", PROCESS),
    ("plugin", NATIVE),
    ("syscall", NATIVE),
    ("unsafe", NATIVE),
    ("C", NATIVE),
    ("runtime/cgo", NATIVE),
    ("golang.org/x/sys", NATIVE),
    ("net", NETWORK),
    ("crypto/tls", NETWORK),
    ("golang.org/x/net", NETWORK),
];

/// Functions of the `os` package (and `io/ioutil`) that write the file system, start or end a
/// process (`MkdirTemp` and `CreateTemp` make temporary folders and files, and are allowed).
const OS_WRITES: &str = r"Create|WriteFile|OpenFile|Remove|RemoveAll|Rename|Mkdir|MkdirAll|Chmod|Chown|Lchown|Chtimes|Symlink|Link|Truncate|Chdir";
const OS_PROCESS: &str = r"StartProcess|FindProcess|Exit|Getppid";

/// Where a test may write: a folder the testing package or the os package made for it.
const TEMPORARY: &[&str] = &["TempDir()", "MkdirTemp(", "CreateTemp("];

pub(super) fn unsafe_calls(source: &str) -> Vec<UnsafeCall> {
    let code = code_only(source, &['"', '`']);
    let imports = imports(&code);
    let mut found: Vec<UnsafeCall> = Vec::new();
    for (_, path) in &imports {
        if let Some((_, reaches)) = FORBIDDEN_IMPORTS
            .iter()
            .find(|(p, _)| path == p || path.starts_with(&format!("{p}/")))
        {
            found.push(UnsafeCall {
                call: format!("import \"{path}\""),
                reaches,
            });
        }
    }
    // The os and ioutil packages under whatever name the file imports them.
    let mut rules: Vec<(String, &'static str, &'static str)> = Vec::new();
    for (alias, path) in &imports {
        let name = match (alias.as_deref(), path.as_str()) {
            (Some("_"), _) => continue,
            // A dot import calls them unqualified: nothing tells a write from a read.
            (Some("."), "os" | "io/ioutil") => {
                found.push(UnsafeCall {
                    call: format!("import . \"{path}\""),
                    reaches: FILE_SYSTEM,
                });
                continue;
            }
            (Some(a), "os" | "io/ioutil") => a.to_string(),
            (None, "os") => "os".into(),
            (None, "io/ioutil") => "ioutil".into(),
            _ => continue,
        };
        rules.push((
            format!(r"\b{name}\s*\.\s*({OS_WRITES})\b"),
            "writes",
            FILE_SYSTEM,
        ));
        rules.push((
            format!(r"\b{name}\s*\.\s*({OS_PROCESS})\b"),
            "process",
            PROCESS,
        ));
    }
    let has_temporary = TEMPORARY.iter().any(|t| code.contains(t));
    for (pattern, _, reaches) in rules {
        if reaches == FILE_SYSTEM && has_temporary {
            continue;
        }
        if let Some(m) = regex::Regex::new(&pattern)
            .ok()
            .and_then(|re| re.find(&code))
        {
            let call: String = m.as_str().split_whitespace().collect();
            if !found.iter().any(|f| f.call == call) {
                found.push(UnsafeCall { call, reaches });
            }
        }
    }
    found
}

/// The file's imports as (alias, path).
fn imports(code: &str) -> Vec<(Option<String>, String)> {
    let spec = regex::Regex::new(r#"(?:([\w.]+)\s+)?["`]([^"`]+)["`]"#).expect("a valid pattern");
    let block = regex::Regex::new(r"\bimport\s*\(([^)]*)\)").expect("a valid pattern");
    let single =
        regex::Regex::new(r#"\bimport\s+((?:[\w.]+\s+)?["`][^"`]+["`])"#).expect("a valid pattern");
    let mut texts: Vec<&str> = block
        .captures_iter(code)
        .filter_map(|c| c.get(1).map(|m| m.as_str()))
        .collect();
    texts.extend(
        single
            .captures_iter(code)
            .filter_map(|c| c.get(1).map(|m| m.as_str())),
    );
    texts
        .iter()
        .flat_map(|t| spec.captures_iter(t))
        .map(|c| (c.get(1).map(|m| m.as_str().to_string()), c[2].to_string()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn process_network_and_stray_writes_are_refused_and_temp_dirs_are_not() {
        let bad = "package calc_test\nimport (\n\t\"os\"\n\t\"os/exec\"\n\t\"net/http\"\n)\nfunc TestX(t *testing.T) { os.RemoveAll(\"..\"); exec.Command(\"rm\").Run(); http.Get(\"http://x\") }";
        let found: Vec<String> = unsafe_calls(bad).iter().map(|c| c.to_string()).collect();
        assert!(found.iter().any(|c| c.contains("os/exec")), "{found:?}");
        assert!(found.iter().any(|c| c.contains("os.Remove")), "{found:?}");
        assert!(found.iter().any(|c| c.contains("net/http")), "{found:?}");
        let in_tmp = "package calc_test\nimport \"os\"\nfunc TestX(t *testing.T) { d := t.TempDir(); os.WriteFile(d+\"/a\", nil, 0o600) }";
        assert!(unsafe_calls(in_tmp).is_empty());
        // Raw-string and aliased imports, and the net family, hide nothing.
        for hidden in [
            "import `os/exec`",
            "import o \"os\"\nfunc TestX(t *testing.T) { o.RemoveAll(\"..\") }",
            "import (\n\tsc \"syscall\"\n)",
            "import \"os\"\nfunc TestX(t *testing.T) { p, _ := os.FindProcess(1); p.Kill() }",
            "import \"crypto/tls\"",
            "import \"net/rpc/jsonrpc\"",
        ] {
            assert!(!unsafe_calls(hidden).is_empty(), "{hidden}");
        }
        let fine = "package calc_test\nimport (\n\t\"testing\"\n\t\"example.com/calc\"\n)\nfunc TestX(t *testing.T) { _ = calc.Add(1, 2) }";
        assert!(unsafe_calls(fine).is_empty(), "{:?}", unsafe_calls(fine));
    }
}
