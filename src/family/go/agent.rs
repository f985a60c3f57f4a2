//! How an agent writes tests for a Go module: `_test.go` files whose package clause places them
//! (the runner puts each in its package's folder), and the static check in front of the
//! sandbox: a Go test reaches the file system, processes and the network through calls no
//! language hook sees, so a candidate that makes them is refused before it is compiled.

use std::path::Path;

use crate::family::agent::{
    check_calls, Conventions, Rule, UnsafeCall, FILE_SYSTEM, NATIVE, NETWORK, PROCESS,
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

const RULES: &[Rule] = &[
    Rule {
        pattern: "\"os/exec\"",
        reaches: PROCESS,
    },
    Rule {
        pattern: "os.StartProcess",
        reaches: PROCESS,
    },
    Rule {
        pattern: "syscall.",
        reaches: NATIVE,
    },
    Rule {
        pattern: "\"unsafe\"",
        reaches: NATIVE,
    },
    Rule {
        pattern: "import \"C\"",
        reaches: NATIVE,
    },
    Rule {
        pattern: "os.Exit",
        reaches: PROCESS,
    },
    Rule {
        pattern: "\"net\"",
        reaches: NETWORK,
    },
    Rule {
        pattern: "\"net/http\"",
        reaches: NETWORK,
    },
    Rule {
        pattern: "\"net/rpc\"",
        reaches: NETWORK,
    },
    Rule {
        pattern: "\"net/smtp\"",
        reaches: NETWORK,
    },
    Rule {
        pattern: "os.Create",
        reaches: FILE_SYSTEM,
    },
    Rule {
        pattern: "os.WriteFile",
        reaches: FILE_SYSTEM,
    },
    Rule {
        pattern: "ioutil.WriteFile",
        reaches: FILE_SYSTEM,
    },
    Rule {
        pattern: "os.OpenFile",
        reaches: FILE_SYSTEM,
    },
    Rule {
        pattern: "os.Remove",
        reaches: FILE_SYSTEM,
    },
    Rule {
        pattern: "os.Rename",
        reaches: FILE_SYSTEM,
    },
    Rule {
        pattern: "os.Mkdir",
        reaches: FILE_SYSTEM,
    },
    Rule {
        pattern: "os.Chmod",
        reaches: FILE_SYSTEM,
    },
    Rule {
        pattern: "os.Chown",
        reaches: FILE_SYSTEM,
    },
    Rule {
        pattern: "os.Symlink",
        reaches: FILE_SYSTEM,
    },
    Rule {
        pattern: "os.Link",
        reaches: FILE_SYSTEM,
    },
    Rule {
        pattern: "os.Truncate",
        reaches: FILE_SYSTEM,
    },
    Rule {
        pattern: "os.Chdir",
        reaches: FILE_SYSTEM,
    },
];

/// Where a test may write: a folder the testing package or the os package made for it.
const TEMPORARY: &[&str] = &["t.TempDir()", "os.MkdirTemp(", "os.CreateTemp("];

pub(super) fn unsafe_calls(source: &str) -> Vec<UnsafeCall> {
    check_calls(source, RULES, TEMPORARY)
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
        let in_tmp = "package calc_test\nfunc TestX(t *testing.T) { d := t.TempDir(); os.WriteFile(d+\"/a\", nil, 0o600) }";
        assert!(unsafe_calls(in_tmp).is_empty());
    }
}
