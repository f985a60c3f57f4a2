//! A traced test run straight from its instrumented binary, without cargo around each test:
//! the binary that `cargo llvm-cov` built runs with `--exact <path>` and a raw profile of its
//! own, then the toolchain's llvm-profdata and llvm-cov turn that profile into LCOV, as
//! cargo-llvm-cov does. About 25 ms a test where `cargo llvm-cov` takes 200 ms, with the same
//! lines. Only a test that passes this way and whose profile is the binary's alone is taken;
//! anything else (no LLVM tools, a failure, a test that ran another of the crate's programs,
//! a report too big to capture) goes back to `cargo llvm-cov` for that test, which runs it as
//! cargo does, with every built program's coverage.

use std::path::{Path, PathBuf};

use super::{outcome_of, Cargo, Step, Target};
use crate::family::rust::gen::coverage::LlvmTools;
use crate::family::suites::TestReach;
use crate::testing::exec::Exec;
use crate::testing::lcov::parse_lcov;
use crate::testing::report::CoverageReport;

/// The test binary cargo ran, from its `Running unittests src/lib.rs (<binary>)` line.
pub(super) fn test_binary(stderr: &str) -> Option<PathBuf> {
    stderr.lines().find_map(|line| {
        let rest = line.trim_start().strip_prefix("Running ")?;
        let binary = rest.strip_suffix(')')?.rsplit_once(" (")?.1;
        Some(PathBuf::from(binary)).filter(|p| p.is_file())
    })
}

impl Cargo<'_> {
    /// Test `path` of `target` run from `binary` under coverage, as [`Cargo::trace_test`]
    /// gives it; None when this way cannot tell and cargo-llvm-cov must.
    pub(super) fn trace_direct(
        &self,
        target: &Target,
        binary: &Path,
        path: &str,
        n: usize,
    ) -> Option<Result<(TestReach, Option<CoverageReport>), Step>> {
        let tools = self
            .llvm
            .get_or_init(|| LlvmTools::find(&self.mirror))
            .as_ref()?;
        let raw = self.reports.join(format!("{n}.profraw.d"));
        let _ = std::fs::remove_dir_all(&raw);
        std::fs::create_dir_all(&raw).ok()?;
        // As cargo runs a test binary: in its package's folder, which it names.
        let package = self.mirror.join(&target.dir);
        let mut exec = Exec {
            sandbox: self.exec.sandbox,
            cwd: package.clone(),
            env: self.exec.env.clone(),
            deadline: self.exec.deadline,
        };
        exec.env.extend([
            (
                "LLVM_PROFILE_FILE".to_string(),
                raw.join("%p-%m.profraw").display().to_string(),
            ),
            (
                "CARGO_MANIFEST_DIR".to_string(),
                package.display().to_string(),
            ),
        ]);
        let argv = [binary.display().to_string(), "--exact".into(), path.into()];
        let run = match exec.run(&argv) {
            Ok(run) => run,
            Err(e @ crate::testing::exec::ExecError::TimedOut { .. }) => {
                return Some(Err(Step::Exec(e)))
            }
            Err(_) => return None,
        };
        let reach = outcome_of(&run, target, path)
            .ok()
            .filter(|r| r.outcome == "passed")?;
        let lcov = self.lcov_of(tools, &exec, binary, &raw, n)?;
        Some(Ok((reach, Some(lcov))))
    }

    /// The LCOV of the raw profiles in `raw` for `binary`; None when a tool failed.
    fn lcov_of(
        &self,
        tools: &LlvmTools,
        exec: &Exec,
        binary: &Path,
        raw: &Path,
        n: usize,
    ) -> Option<CoverageReport> {
        let profiles: Vec<String> = std::fs::read_dir(raw)
            .ok()?
            .flatten()
            .map(|e| e.path().display().to_string())
            .filter(|p| p.ends_with(".profraw"))
            .collect();
        // One profile per program that ran: more than one means the test started another of
        // the crate's programs, whose coverage only cargo-llvm-cov's export has.
        if profiles.len() != 1 {
            return None;
        }
        let merged = self.reports.join(format!("{n}.profdata"));
        let (profdata, cov) = tools.paths();
        let mut merge = vec![
            profdata.display().to_string(),
            "merge".into(),
            "-sparse".into(),
        ];
        merge.extend(profiles);
        merge.extend(["-o".into(), merged.display().to_string()]);
        exec.run(&merge).ok().filter(|r| r.success())?;
        let export = [
            cov.display().to_string(),
            "export".into(),
            "-format=lcov".into(),
            format!("-instr-profile={}", merged.display()),
            binary.display().to_string(),
        ];
        let out = exec.run(&export).ok().filter(|r| r.success())?;
        // A report past the capture's cap lost its middle: cargo-llvm-cov writes it to a file.
        if out.stdout.len() >= crate::proc::OUTPUT_CAP / 2 {
            return None;
        }
        let lcov = self.reports.join(format!("{n}.info"));
        crate::util::write_nofollow(&lcov, out.stdout.as_bytes()).ok()?;
        let _ = std::fs::remove_dir_all(raw);
        let _ = std::fs::remove_file(&merged);
        parse_lcov(&lcov).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_test_binary_is_read_from_cargos_running_line() {
        let exe = std::env::current_exe().unwrap();
        let stderr = format!(
            "   Compiling calc v0.1.0\n     Running unittests src/lib.rs ({})\n",
            exe.display()
        );
        assert_eq!(test_binary(&stderr), Some(exe));
        assert_eq!(
            test_binary("     Running unittests src/lib.rs (/no/such)\n"),
            None
        );
        assert_eq!(test_binary("nothing ran\n"), None);
    }
}
