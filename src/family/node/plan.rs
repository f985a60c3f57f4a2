//! The command of a run for each runner: node --test with our reporters, jest with our JUnit
//! reporter, vitest, mocha; c8 or nyc around it when they measure coverage.

use std::path::{Path, PathBuf};

use super::ctx::Ctx;
use super::run::{Coverage, Plan};
use super::TESTS_DIR;
use crate::testing::framework::Framework;

impl Ctx<'_> {
    pub(super) fn plan(&self, files: &[PathBuf], coverage: Coverage) -> Plan {
        let junit = self.result_file("junit", "xml").0;
        let lcov_dir = self.scratch.join("coverage");
        // A repair iteration reruns under the same run number: an old report must not pass
        // for this run's when the tool dies before writing its own.
        let _ = std::fs::remove_dir_all(&lcov_dir);
        let _ = std::fs::remove_file(&junit);
        let _ = std::fs::remove_file(self.result_file("lcov", "info").0);
        let files: Vec<String> = files.iter().map(|f| self.in_copy(f)).collect();
        let mut plan = match self.framework {
            Framework::Jest => self.jest(&files, &junit, coverage, &lcov_dir),
            Framework::Vitest => self.vitest(&files, &junit, coverage, &lcov_dir),
            Framework::Mocha => self.mocha(&files, &junit),
            _ => self.node_test(&files, &junit, coverage == Coverage::NodeBuiltin),
        };
        self.wrap_coverage(&mut plan, coverage, &lcov_dir);
        plan
    }

    /// `node --test` with JUnit, spec (stdout), attribution and, with node's own coverage, LCOV.
    pub(super) fn node_test(&self, files: &[String], junit: &Path, coverage: bool) -> Plan {
        let attribution = self
            .scratch
            .join(format!("attribution-{}.jsonl", self.spec.run_no));
        let _ = std::fs::remove_file(&attribution);
        let mut argv = self.node_runner();
        argv.extend(self.reporters(junit, &attribution));
        argv.extend(
            ["--test-reporter=spec", "--test-reporter-destination=stdout"].map(String::from),
        );
        let mut lcov = None;
        if coverage {
            let path = self.result_file("lcov", "info").0;
            argv.push("--experimental-test-coverage".into());
            argv.push("--test-reporter=lcov".into());
            argv.push(format!("--test-reporter-destination={}", path.display()));
            lcov = Some(path);
        }
        argv.extend(files.iter().cloned());
        Plan {
            argv,
            env: Vec::new(),
            junit: junit.to_path_buf(),
            attribution: Some(attribution),
            lcov,
        }
    }

    /// `node --test` (the toolchain's runner argv when it has one).
    pub(super) fn node_runner(&self) -> Vec<String> {
        let runner = &self.spec.tools.runner;
        if runner.is_empty() || self.framework != Framework::NodeTest {
            vec![self.node(), "--test".into()]
        } else {
            runner.clone()
        }
    }

    /// The JUnit and attribution reporters (every node run has both).
    pub(super) fn reporters(&self, junit: &Path, attribution: &Path) -> Vec<String> {
        let reporter = self.scratch.join("attribution.mjs");
        vec![
            "--test-reporter=junit".into(),
            format!("--test-reporter-destination={}", junit.display()),
            format!("--test-reporter={}", reporter.display()),
            format!("--test-reporter-destination={}", attribution.display()),
        ]
    }

    /// jest with our JUnit reporter (jest_junit.cjs in the scratch folder): a project needs no
    /// jest-junit of its own.
    pub(super) fn jest(
        &self,
        files: &[String],
        junit: &Path,
        coverage: Coverage,
        lcov_dir: &Path,
    ) -> Plan {
        let reporter = self.scratch.join(super::ctx::JEST_REPORTER_FILE);
        let mut argv = self.spec.tools.runner.clone();
        argv.extend([
            "--ci".to_string(),
            "--reporters=default".to_string(),
            format!("--reporters={}", reporter.display()),
        ]);
        let mut lcov = None;
        if coverage == Coverage::Framework {
            argv.extend(["--coverage".into(), "--coverageReporters=lcov".into()]);
            argv.push(format!("--coverageDirectory={}", lcov_dir.display()));
            lcov = Some(lcov_dir.join("lcov.info"));
        }
        // Our tests live in tt-tests/, where a project's own `roots` or `testMatch` may not look:
        // then the whole copy is the root and our folder's scripts are the tests. The project's
        // own tests (the baseline) run under its own configuration: jest filters even the paths
        // it is given by testMatch.
        let ours = files
            .iter()
            .all(|f| f.starts_with(&format!("{TESTS_DIR}/")));
        if ours && super::config::has_jest_config(&self.copy) {
            argv.extend([
                "--roots".to_string(),
                self.copy.display().to_string(),
                "--testMatch".to_string(),
                format!("**/{TESTS_DIR}/**/*.?(c|m)[jt]s?(x)"),
            ]);
        }
        // Array options (--reporters, --coverageReporters, --roots, --testMatch) swallow the plain
        // words after them: a boolean flag right before the files ends them.
        argv.push("--runTestsByPath".into());
        argv.extend(files.iter().cloned());
        let mut env = vec![("TT_JEST_JUNIT".to_string(), junit.display().to_string())];
        // jest runs ES modules only under node's VM-modules flag.
        if self.is_esm_package() {
            let inherited = std::env::var("NODE_OPTIONS").unwrap_or_default();
            let options = format!("{inherited} --experimental-vm-modules");
            env.push(("NODE_OPTIONS".into(), options.trim().to_string()));
        }
        Plan {
            argv,
            env,
            junit: junit.to_path_buf(),
            attribution: None,
            lcov,
        }
    }

    fn has_vite_config(&self) -> bool {
        ["vitest.config", "vite.config"].iter().any(|stem| {
            ["ts", "mts", "js", "mjs", "cjs"]
                .iter()
                .any(|ext| self.copy.join(format!("{stem}.{ext}")).is_file())
        })
    }

    /// Whether the project's vitest is at least `major.minor` (from its package.json).
    fn vitest_at_least(&self, major: u64, minor: u64) -> bool {
        let manifest = self.copy.join("node_modules/vitest/package.json");
        let Ok(v) = crate::util::read_json::<serde_json::Value>(&manifest) else {
            return false;
        };
        let mut parts = v["version"]
            .as_str()
            .unwrap_or("0")
            .split(['.', '-'])
            .map(|p| p.parse::<u64>().unwrap_or(0));
        let (a, b) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
        (a, b) >= (major, minor)
    }

    /// A project config with its own `include` would leave our tt-tests/ out (vitest has no
    /// CLI option for it): a config of ours beside it in the copy takes the project's and only
    /// widens `include`. None when the project's config says nothing of `include`.
    fn vitest_config_override(&self) -> Option<PathBuf> {
        let project = ["vitest.config", "vite.config"].iter().find_map(|stem| {
            ["ts", "mts", "js", "mjs", "cjs"]
                .iter()
                .map(|ext| format!("{stem}.{ext}"))
                .find(|name| self.copy.join(name).is_file())
        })?;
        let text = std::fs::read_to_string(self.copy.join(&project)).ok()?;
        if !text.contains("include") {
            return None;
        }
        let ours = self.copy.join("vitest.team-testing.config.mjs");
        let body = format!(
            "import {{ mergeConfig }} from 'vitest/config';\n\
             import project from './{project}';\n\
             const base = typeof project === 'function' ? await project({{ mode: 'test', command: 'serve' }}) : project;\n\
             export default mergeConfig(base, {{ test: {{ include: ['{TESTS_DIR}/**/*.{{test,spec}}.?(c|m)[jt]s?(x)'] }} }});\n"
        );
        crate::util::write_nofollow(&ours, body.as_bytes()).ok()?;
        Some(ours)
    }

    pub(super) fn vitest(
        &self,
        files: &[String],
        junit: &Path,
        coverage: Coverage,
        lcov_dir: &Path,
    ) -> Plan {
        let mut argv = self.spec.tools.runner.clone();
        // --no-cache: vitest keeps its results cache in node_modules/.vite, the project's.
        argv.extend(
            [
                "run",
                "--no-cache",
                "--reporter=default",
                "--reporter=junit",
            ]
            .map(String::from),
        );
        argv.push(format!("--outputFile.junit={}", junit.display()));
        let mut lcov = None;
        if coverage == Coverage::Framework {
            // vitest writes no coverage for a failing run unless told to.
            argv.extend(
                [
                    "--coverage.enabled=true",
                    "--coverage.reporter=lcov",
                    "--coverage.reportOnFailure=true",
                ]
                .map(String::from),
            );
            argv.push(format!(
                "--coverage.reportsDirectory={}",
                lcov_dir.display()
            ));
            lcov = Some(lcov_dir.join("lcov.info"));
        }
        if let Some(config) = self.vitest_config_override() {
            argv.push(format!("--config={}", config.display()));
        }
        // vite bundles a config file into node_modules/.vite-temp, which the sandbox keeps
        // read-only (node_modules is the project's); vitest 3.1+ can load it in memory instead.
        if self.has_vite_config() && self.vitest_at_least(3, 1) {
            argv.push("--configLoader=runner".into());
        }
        argv.extend(files.iter().cloned());
        // vitest instantiates WebAssembly, and V8 reserves about 10 GiB of address space per
        // Wasm memory for its trap handler: two of them pass the sandbox's address-space limit.
        let mut env = Vec::new();
        if self.spec.sandbox.is_some() && node_has_flag(&self.node(), WASM_FLAG) {
            let inherited = std::env::var("NODE_OPTIONS").unwrap_or_default();
            let options = format!("{inherited} {WASM_FLAG}");
            env.push(("NODE_OPTIONS".to_string(), options.trim().to_string()));
        }
        Plan {
            argv,
            env,
            junit: junit.to_path_buf(),
            attribution: None,
            lcov,
        }
    }

    /// mocha with its built-in xunit reporter (JUnit-shaped XML).
    pub(super) fn mocha(&self, files: &[String], junit: &Path) -> Plan {
        let mut argv = self.spec.tools.runner.clone();
        argv.push("--reporter=xunit".into());
        argv.push(format!("--reporter-option=output={}", junit.display()));
        argv.extend(files.iter().cloned());
        Plan {
            argv,
            env: Vec::new(),
            junit: junit.to_path_buf(),
            attribution: None,
            lcov: None,
        }
    }

    /// c8 and nyc wrap the whole command and write `lcov.info` into `lcov_dir`.
    pub(super) fn wrap_coverage(&self, plan: &mut Plan, coverage: Coverage, lcov_dir: &Path) {
        let bin = |name: &str| {
            self.copy
                .join("node_modules/.bin")
                .join(name)
                .display()
                .to_string()
        };
        let mut wrapper = match coverage {
            Coverage::C8 => vec![
                bin("c8"),
                "--reporter=lcovonly".into(),
                format!("--reports-dir={}", lcov_dir.display()),
                format!("--temp-directory={}", lcov_dir.join("tmp").display()),
            ],
            // --cache=false: nyc keeps its cache in the project's node_modules/.cache.
            Coverage::Nyc => vec![
                bin("nyc"),
                "--cache=false".into(),
                "--reporter=lcovonly".into(),
                format!("--report-dir={}", lcov_dir.display()),
                format!("--temp-dir={}", lcov_dir.join("nyc_output").display()),
            ],
            _ => return,
        };
        wrapper.append(&mut plan.argv);
        plan.argv = wrapper;
        plan.lcov = Some(lcov_dir.join("lcov.info"));
    }

    pub(super) fn is_esm_package(&self) -> bool {
        let text = std::fs::read_to_string(self.copy.join("package.json")).unwrap_or_default();
        serde_json::from_str::<serde_json::Value>(&text)
            .is_ok_and(|v| v.get("type").and_then(|t| t.as_str()) == Some("module"))
    }
}

/// The node flag that keeps Wasm memories from reserving guard regions (node >= 20.15).
const WASM_FLAG: &str = "--disable-wasm-trap-handler";

/// Whether `node` accepts `flag` (asked once per node and flag).
fn node_has_flag(node: &str, flag: &str) -> bool {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    static SEEN: OnceLock<Mutex<HashMap<(String, String), bool>>> = OnceLock::new();
    let seen = SEEN.get_or_init(Default::default);
    let key = (node.to_string(), flag.to_string());
    if let Some(&known) = seen.lock().ok().and_then(|m| m.get(&key).copied()).as_ref() {
        return known;
    }
    let ok = crate::proc::run_captured(
        &[node, flag, "-e", "0"],
        &std::env::temp_dir(),
        std::time::Duration::from_secs(20),
    )
    .is_ok_and(|o| o.success());
    if let Ok(mut m) = seen.lock() {
        m.insert(key, ok);
    }
    ok
}
