//! What a candidate reached, from the raw profile its instrumented run wrote: the crate's
//! coverage counters it made non-zero (a counter stands for a region of code), read with the
//! toolchain's `llvm-profdata`; and line coverage of a set of runs, with `llvm-cov export`.
//! Both tools come with rustup's `llvm-tools` component (cargo-llvm-cov needs it too).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::testing::report::CoverageReport;

/// A counter of one function: (demangled function, counter index).
pub type Counter = (String, u32);

/// The crate's counters in one profile: those that ran, and all of them.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Counts {
    pub ran: BTreeSet<Counter>,
    pub all: BTreeSet<Counter>,
    /// Counters that stayed at zero in functions that ran. A region of code is a counter or
    /// an expression over counters (`if c { a } b` counts the function and `a`; `b` is their
    /// difference), so a call that skips `a` reaches `b` without making any counter non-zero:
    /// its zeros say it.
    pub skipped: BTreeSet<Counter>,
}

impl Counts {
    /// What the run did, as the search compares runs: each counter of a function that ran,
    /// run or skipped.
    pub fn features(&self) -> BTreeSet<(String, u32, bool)> {
        self.ran
            .iter()
            .map(|(f, i)| (f.clone(), *i, true))
            .chain(self.skipped.iter().map(|(f, i)| (f.clone(), *i, false)))
            .collect()
    }
}

/// The toolchain's LLVM tools.
pub struct LlvmTools {
    profdata: PathBuf,
    cov: PathBuf,
}

/// Why candidates are kept without coverage.
pub const MISSING: &str = "llvm-profdata and llvm-cov are not installed, so candidates are kept \
     without coverage guidance: rustup component add llvm-tools-preview";

const TOOL_TIMEOUT: Duration = Duration::from_secs(120);

impl LlvmTools {
    /// The tools of the toolchain the crate builds with (its rust-toolchain file counts); None
    /// when they are not installed ([`MISSING`] says what to do).
    pub fn find(copy: &Path) -> Option<LlvmTools> {
        // A toolchain the crate names but rustup lacks is not installed on the way.
        let env = [("RUSTUP_AUTO_INSTALL", "0")];
        let rustc = |args: &[&str]| {
            let argv: Vec<&str> = std::iter::once("rustc")
                .chain(args.iter().copied())
                .collect();
            crate::proc::run_captured_env(&argv, copy, &env, TOOL_TIMEOUT).ok()
        };
        let sysroot = rustc(&["--print", "sysroot"])?;
        let info = rustc(&["-vV"])?;
        let host = info
            .stdout
            .lines()
            .find_map(|l| l.strip_prefix("host: "))
            .unwrap_or_default()
            .trim()
            .to_string();
        let bin = Path::new(sysroot.stdout.trim())
            .join("lib/rustlib")
            .join(host)
            .join("bin");
        let tools = LlvmTools {
            profdata: bin.join("llvm-profdata"),
            cov: bin.join("llvm-cov"),
        };
        (tools.profdata.is_file() && tools.cov.is_file()).then_some(tools)
    }

    /// llvm-profdata and llvm-cov.
    pub fn paths(&self) -> (&Path, &Path) {
        (&self.profdata, &self.cov)
    }

    /// The counters of `crate_name`'s functions that `profile` recorded as run (None when the
    /// profile is missing or unreadable: the run died before writing it).
    pub fn counters(&self, profile: &Path, crate_name: &str) -> Option<Counts> {
        if !profile.is_file() {
            return None;
        }
        let profdata = self.profdata.display().to_string();
        let file = profile.display().to_string();
        let cwd = profile.parent()?;
        let out = crate::proc::run_captured(
            &[&profdata, "show", "--all-functions", "--counts", &file],
            cwd,
            TOOL_TIMEOUT,
        )
        .ok()?;
        out.success().then(|| parse_counts(&out.stdout, crate_name))
    }

    /// Line coverage of `binary`'s code from `profiles`, for the crate's own files only.
    pub fn lines(
        &self,
        profiles: &[PathBuf],
        binary: &Path,
        scratch: &Path,
        copy: &Path,
    ) -> Option<CoverageReport> {
        if profiles.is_empty() {
            return None;
        }
        let merged = scratch.join("probe.profdata");
        let mut argv: Vec<String> = vec![
            self.profdata.display().to_string(),
            "merge".into(),
            "-sparse".into(),
            "-o".into(),
            merged.display().to_string(),
        ];
        argv.extend(profiles.iter().map(|p| p.display().to_string()));
        let argv_ref: Vec<&str> = argv.iter().map(String::as_str).collect();
        let out = crate::proc::run_captured(&argv_ref, scratch, TOOL_TIMEOUT).ok()?;
        if !out.success() {
            return None;
        }
        let cov = self.cov.display().to_string();
        let profile = merged.display().to_string();
        let exe = binary.display().to_string();
        // Only the crate's own files: not its dependencies, the standard library or the probe.
        let out = crate::proc::run_captured(
            &[
                &cov,
                "export",
                "-format=lcov",
                "-instr-profile",
                &profile,
                &exe,
                "-ignore-filename-regex",
                r"(^|/)(\.cargo|\.rustup|rustc|tests)/",
            ],
            copy,
            TOOL_TIMEOUT,
        )
        .ok()?;
        if !out.success() {
            return None;
        }
        let report =
            crate::testing::lcov::parse_lcov_str(&out.stdout, Path::new("probe.lcov")).ok()?;
        Some(report.relative_to(copy))
    }
}

/// The counters of `crate_name`'s functions that ran, from `llvm-profdata show --counts`.
fn parse_counts(text: &str, crate_name: &str) -> Counts {
    let mut out = Counts::default();
    let mut function: Option<String> = None;
    let own = |name: &str| {
        let d = format!("{:#}", rustc_demangle::demangle(name));
        let d2 = d.trim_start_matches('<');
        (d2.starts_with(&format!("{crate_name}::"))).then_some(d)
    };
    let mut entered = false;
    for line in text.lines() {
        let trimmed = line.trim();
        if line.starts_with("  ") && !line.starts_with("    ") && trimmed.ends_with(':') {
            function = own(trimmed.trim_end_matches(':'));
        } else if let Some(f) = &function {
            if let Some(n) = trimmed.strip_prefix("Function count: ") {
                out.all.insert((f.clone(), 0));
                entered = n.trim().parse::<u64>().is_ok_and(|n| n > 0);
                if entered {
                    out.ran.insert((f.clone(), 0));
                }
            } else if let Some(list) = trimmed.strip_prefix("Block counts: ") {
                let list = list.trim_start_matches('[').trim_end_matches(']');
                for (i, n) in list.split(',').filter(|n| !n.trim().is_empty()).enumerate() {
                    let counter = (f.clone(), i as u32 + 1);
                    out.all.insert(counter.clone());
                    if n.trim().parse::<u64>().is_ok_and(|n| n > 0) {
                        out.ran.insert(counter);
                    } else if entered {
                        out.skipped.insert(counter);
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_crates_counters_that_ran_count() {
        let text = "Counters:\n  _RNvCsfo0L21Z0SsO_1ps_2c1:\n    Hash: 0x1\n    Counters: 1\n    Function count: 1\n    Block counts: []\n  _RNvCsj6qEZQlgqZc_1c3add:\n    Hash: 0x2\n    Counters: 1\n    Function count: 0\n    Block counts: []\n  _RNvCsj6qEZQlgqZc_1c5first:\n    Hash: 0x3\n    Counters: 3\n    Function count: 1\n    Block counts: [0, 4]\n";
        let got = parse_counts(text, "c").ran;
        let want: BTreeSet<Counter> = [("c::first".to_string(), 0), ("c::first".to_string(), 2)]
            .into_iter()
            .collect();
        assert_eq!(got, want);
    }
}
