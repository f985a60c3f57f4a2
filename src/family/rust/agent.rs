//! How an agent writes tests for a crate: integration-test files (`tests/<name>.rs`) that use the
//! crate's public API, and the static check in front of the sandbox: a Rust test can reach the
//! file system, processes and the network through calls no language hook sees, so a candidate
//! that makes them is refused before it is compiled.

use std::path::Path;

use crate::family::agent::{
    check_calls, Conventions, Rule, UnsafeCall, FILE_SYSTEM, NATIVE, NETWORK, PROCESS,
};

pub(super) fn conventions(repo: &Path) -> Conventions {
    let krate = crate_name(repo).unwrap_or_else(|| "the_crate".into());
    Conventions {
        language: "Rust",
        framework: "cargo test".into(),
        fence: "rust",
        comment: "//",
        file_name: "<name>.rs".into(),
        idioms: vec![
            format!("Each file is an integration test of its own (cargo puts it in `tests/`): reach the code through the crate's public API (`use {krate}::…;`), never `crate::` or private items."),
            "Write `#[test]` functions that assert with `assert_eq!`, `assert!` or `matches!`; a test of a panic uses `#[should_panic]`. Only the crate's own dependencies and `std` are available.".into(),
            "No `unsafe`, no `std::process`, no `std::net`; write files only under a folder of `std::env::temp_dir()` named for the test.".into(),
        ],
        is_test_file,
    }
}

fn is_test_file(name: &str) -> bool {
    name.ends_with(".rs") && name.len() > 3
}

/// The crate's library name as tests `use` it: `[lib] name`, else `[package] name` with `-` as
/// `_`.
fn crate_name(repo: &Path) -> Option<String> {
    let text = std::fs::read_to_string(repo.join("Cargo.toml")).ok()?;
    let manifest: toml::Value = toml::from_str(&text).ok()?;
    let name = manifest
        .get("lib")
        .and_then(|l| l.get("name"))
        .or_else(|| manifest.get("package").and_then(|p| p.get("name")))?
        .as_str()?;
    Some(name.replace('-', "_"))
}

const RULES: &[Rule] = &[
    Rule {
        pattern: "std::process",
        reaches: PROCESS,
    },
    Rule {
        pattern: "process::Command",
        reaches: PROCESS,
    },
    Rule {
        pattern: "Command::new",
        reaches: PROCESS,
    },
    Rule {
        pattern: "process::exit",
        reaches: PROCESS,
    },
    Rule {
        pattern: "libc::",
        reaches: NATIVE,
    },
    Rule {
        pattern: "unsafe ",
        reaches: NATIVE,
    },
    Rule {
        pattern: "unsafe{",
        reaches: NATIVE,
    },
    Rule {
        pattern: "extern \"C\"",
        reaches: NATIVE,
    },
    Rule {
        pattern: "std::net",
        reaches: NETWORK,
    },
    Rule {
        pattern: "TcpStream",
        reaches: NETWORK,
    },
    Rule {
        pattern: "TcpListener",
        reaches: NETWORK,
    },
    Rule {
        pattern: "UdpSocket",
        reaches: NETWORK,
    },
    Rule {
        pattern: "remove_file",
        reaches: FILE_SYSTEM,
    },
    Rule {
        pattern: "remove_dir",
        reaches: FILE_SYSTEM,
    },
    Rule {
        pattern: "create_dir",
        reaches: FILE_SYSTEM,
    },
    Rule {
        pattern: "File::create",
        reaches: FILE_SYSTEM,
    },
    Rule {
        pattern: "OpenOptions",
        reaches: FILE_SYSTEM,
    },
    Rule {
        pattern: "fs::write",
        reaches: FILE_SYSTEM,
    },
    Rule {
        pattern: "fs::rename",
        reaches: FILE_SYSTEM,
    },
    Rule {
        pattern: "fs::copy",
        reaches: FILE_SYSTEM,
    },
    Rule {
        pattern: "fs::hard_link",
        reaches: FILE_SYSTEM,
    },
    Rule {
        pattern: "set_permissions",
        reaches: FILE_SYSTEM,
    },
    Rule {
        pattern: "symlink",
        reaches: FILE_SYSTEM,
    },
    Rule {
        pattern: "set_current_dir",
        reaches: FILE_SYSTEM,
    },
];

/// Where a test may write: a folder it made under the temporary folder.
const TEMPORARY: &[&str] = &["env::temp_dir()", "tempfile::", "TempDir"];

pub(super) fn unsafe_calls(source: &str) -> Vec<UnsafeCall> {
    check_calls(source, RULES, TEMPORARY)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn process_network_and_stray_writes_are_refused_and_reads_are_not() {
        let bad = "use std::process::Command;\n#[test]\nfn t() { std::fs::remove_dir_all(\"/x\").unwrap(); let _ = std::net::TcpStream::connect(\"a:1\"); }";
        let found: Vec<String> = unsafe_calls(bad).iter().map(|c| c.to_string()).collect();
        assert!(
            found.iter().any(|c| c.contains("std::process")),
            "{found:?}"
        );
        assert!(found.iter().any(|c| c.contains("remove_dir")), "{found:?}");
        assert!(found.iter().any(|c| c.contains("std::net")), "{found:?}");
        let fine = "#[test]\nfn t() { let s = std::fs::read_to_string(\"Cargo.toml\"); assert!(s.is_ok()); }";
        assert!(unsafe_calls(fine).is_empty());
        let in_tmp = "#[test]\nfn t() { let d = std::env::temp_dir().join(\"t\"); std::fs::create_dir_all(&d).unwrap(); }";
        assert!(unsafe_calls(in_tmp).is_empty());
    }
}
