//! How an agent writes tests for a crate: integration-test files (`tests/<name>.rs`) that use the
//! crate's public API, and the static check in front of the sandbox: a Rust test can reach the
//! file system, processes and the network through calls no language hook sees, so a candidate
//! that makes them is refused before it is compiled.

use std::path::Path;

use crate::family::agent::{
    check_calls, code_only, Conventions, Rule, UnsafeCall, FILE_SYSTEM, NATIVE, NETWORK, PROCESS,
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

macro_rules! rule {
    ($pattern:expr, $call:expr, $reaches:expr) => {
        Rule {
            pattern: $pattern,
            call: $call,
            reaches: $reaches,
        }
    };
}

/// Paths are matched with any spacing (`std :: process`), grouped imports too
/// (`use std::{net::…}`); every `std::os` extension (Unix sockets, links, process extensions) is
/// refused whole.
const RULES: &[Rule] = &[
    rule!(r"\bprocess\s*::", "std::process", PROCESS),
    rule!(r"\bCommand\s*::\s*new\b", "Command::new", PROCESS),
    rule!(r"\bstd\s*::\s*os\b", "std::os", NATIVE),
    rule!(
        r"\bstd\s*::\s*\{[^}]*\b(os|net|process)\b",
        "std::{os, net, process}",
        NATIVE
    ),
    rule!(r"\blibc\b", "libc", NATIVE),
    rule!(r"\bunsafe\b", "unsafe", NATIVE),
    rule!(r#"\bextern\s*""#, "extern", NATIVE),
    rule!(r"\bnet\s*::", "std::net", NETWORK),
    rule!(
        r"\b(TcpStream|TcpListener|UdpSocket|UnixStream|UnixListener|UnixDatagram|ToSocketAddrs)\b",
        "a socket",
        NETWORK
    ),
    rule!(
        r"\bremove_(file|dir|dir_all)\b",
        "fs::remove_*",
        FILE_SYSTEM
    ),
    rule!(r"\bcreate_dir(_all)?\b", "fs::create_dir", FILE_SYSTEM),
    rule!(
        r"\bFile\s*::\s*(create|create_new|options)\b",
        "File::create",
        FILE_SYSTEM
    ),
    rule!(r"\bOpenOptions\b", "OpenOptions", FILE_SYSTEM),
    rule!(
        r"\bfs\s*::\s*(write|rename|copy|hard_link|set_permissions)\b",
        "fs::write",
        FILE_SYSTEM
    ),
    rule!(r"\bset_permissions\b", "set_permissions", FILE_SYSTEM),
    rule!(r"\bsymlink", "symlink", FILE_SYSTEM),
    rule!(r"\bset_current_dir\b", "set_current_dir", FILE_SYSTEM),
];

/// Where a test may write: a folder it made under the temporary folder.
const TEMPORARY: &[&str] = &["temp_dir()", "tempfile::", "TempDir"];

pub(super) fn unsafe_calls(source: &str) -> Vec<UnsafeCall> {
    check_calls(&code_only(source, &['"']), RULES, TEMPORARY)
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
        assert!(found.iter().any(|c| c.contains("fs::remove")), "{found:?}");
        assert!(found.iter().any(|c| c.contains("std::net")), "{found:?}");
        let fine = "#[test]\nfn t() { let s = std::fs::read_to_string(\"Cargo.toml\"); assert!(s.is_ok()); }";
        assert!(unsafe_calls(fine).is_empty());
        let in_tmp = "#[test]\nfn t() { let d = std::env::temp_dir().join(\"t\"); std::fs::create_dir_all(&d).unwrap(); }";
        assert!(unsafe_calls(in_tmp).is_empty());
        // Spacing, grouped imports, Unix sockets and a `//` inside a string hide nothing.
        for hidden in [
            "fn t() { std :: process :: Command :: new(\"rm\"); }",
            "use std::{net::ToSocketAddrs};",
            "use std::os::unix::net::UnixStream;",
            "fn t() { let u = \"http://x\"; let _ = std::net::TcpStream::connect(u); }",
            "fn t() { unsafe\n{ } }",
        ] {
            assert!(!unsafe_calls(hidden).is_empty(), "{hidden}");
        }
    }
}
