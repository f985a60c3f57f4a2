//! A small builder that drives the real `team-testing` binary against fixture projects copied into
//! a temp dir (real git, real python).

#![allow(dead_code)]

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

pub const BIN: &str = env!("CARGO_BIN_EXE_team-testing");
/// `run --max-mutants` for the tests about something else than mutation: a session's score
/// still has its mutation term, from a sample small enough to keep CI short (the mutation tests
/// run the default sample).
pub const QUICK_MUTANTS: &str = "20";
/// No command of a test may hang CI.
const TIMEOUT: Duration = Duration::from_secs(180);

pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

pub fn scripted_roles() -> PathBuf {
    fixtures().join("roles/scripted")
}

pub struct Project {
    pub tmp: tempfile::TempDir,
    pub repo: PathBuf,
    pub sessions: PathBuf,
}

pub struct Output {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Output {
    /// The session id from the first line `Session <id> (<path>)`.
    pub fn session_id(&self) -> String {
        self.stdout
            .lines()
            .find_map(|l| l.strip_prefix("Session "))
            .and_then(|l| l.split_whitespace().next())
            .unwrap_or_else(|| panic!("no session line in:\n{}\n{}", self.stdout, self.stderr))
            .to_string()
    }

    pub fn assert_code(&self, code: i32) -> &Self {
        assert_eq!(
            self.code, code,
            "exit code\n--- stdout\n{}\n--- stderr\n{}",
            self.stdout, self.stderr
        );
        self
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            if e.file_name() == "__pycache__" {
                continue;
            }
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

pub fn git(repo: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=team-testing",
            "-c",
            "user.email=tt@example.invalid",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(repo)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

impl Project {
    /// A copy of a fixture project, committed to a fresh git repository.
    pub fn fixture(name: &str) -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path().join("repo");
        copy_dir(&fixtures().join(name), &repo);
        git(&repo, &["init", "-q"]);
        git(&repo, &["add", "."]);
        git(&repo, &["commit", "-q", "-m", "initial"]);
        let sessions = tmp.path().join("sessions");
        Project {
            tmp,
            repo,
            sessions,
        }
    }

    /// An empty folder that is not a git repository.
    pub fn plain() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path().join("repo");
        std::fs::create_dir_all(&repo).unwrap();
        std::fs::write(repo.join("main.py"), "print('hi')\n").unwrap();
        let sessions = tmp.path().join("sessions");
        Project {
            tmp,
            repo,
            sessions,
        }
    }

    pub fn write(&self, rel: &str, text: &str) {
        let p = self.repo.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    pub fn cmd(&self, args: &[&str]) -> Cmd {
        let mut c = Command::new(BIN);
        c.args(args)
            .current_dir(&self.repo)
            .env("TEAM_TESTING_SESSIONS", &self.sessions)
            .env_remove("TEAM_TESTING_LOG");
        Cmd { c }
    }

    /// `run TASK --roles-dir <scripted> --pipeline MODE` with the scripted command roles.
    pub fn scripted_run(&self, task: &str, mode: &str) -> Cmd {
        self.run_with_roles(&scripted_roles(), task, mode)
    }

    /// `run TASK --roles-dir ROLES --pipeline MODE`.
    pub fn run_with_roles(&self, roles: &Path, task: &str, mode: &str) -> Cmd {
        let roles = roles.to_str().unwrap();
        self.cmd(&["run", task, "--pipeline", mode, "--roles-dir", roles])
    }

    /// Writes `<tmp>/roles/<name>/role.md` and returns the roles folder.
    pub fn write_role(&self, name: &str, text: &str) -> PathBuf {
        let roles = self.tmp.path().join("roles");
        std::fs::create_dir_all(roles.join(name)).unwrap();
        std::fs::write(roles.join(name).join("role.md"), text).unwrap();
        roles
    }

    /// The session's folder (archived sessions stay where they are).
    pub fn session_dir(&self, id: &str) -> PathBuf {
        let live = self.sessions.join(id);
        // Where an earlier version moved archived sessions; a test may put one there.
        let legacy = self.sessions.join("archive").join(id);
        if !live.exists() && legacy.exists() {
            legacy
        } else {
            live
        }
    }

    pub fn tasks(&self, id: &str) -> Vec<Value> {
        let v = read_json(&self.session_dir(id).join("tasks.json"));
        v["tasks"].as_array().unwrap().clone()
    }

    pub fn messages(&self, id: &str) -> Vec<Value> {
        let text =
            std::fs::read_to_string(self.session_dir(id).join(".msg/messages.jsonl")).unwrap();
        text.lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("line {l:?}: {e}")))
            .collect()
    }

    /// Lines `start|end TASK ATTEMPT TIME` written by the scripted roles.
    pub fn fixture_runs(&self, id: &str) -> Vec<(String, String, u32, f64)> {
        let text = std::fs::read_to_string(self.session_dir(id).join("fixture-runs.log"))
            .unwrap_or_default();
        text.lines()
            .map(|l| {
                let p: Vec<&str> = l.split_whitespace().collect();
                (
                    p[0].to_string(),
                    p[1].to_string(),
                    p[2].parse().unwrap(),
                    p[3].parse().unwrap(),
                )
            })
            .collect()
    }
}

/// `git status --porcelain` of a repository (with `--ignored` when asked), trimmed.
pub fn git_status(repo: &Path, ignored: bool) -> String {
    let mut args = vec!["status", "--porcelain"];
    if ignored {
        args.push("--ignored");
    }
    let out = Command::new("git")
        .args(&args)
        .current_dir(repo)
        .output()
        .expect("git runs");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

pub fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

pub struct Cmd {
    pub c: Command,
}

impl Cmd {
    pub fn env(mut self, k: &str, v: &str) -> Self {
        self.c.env(k, v);
        self
    }

    pub fn arg(mut self, a: &str) -> Self {
        self.c.arg(a);
        self
    }

    pub fn args(mut self, a: &[&str]) -> Self {
        self.c.args(a);
        self
    }

    pub fn spawn(mut self) -> Child {
        self.c
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("binary starts")
    }

    pub fn run(self) -> Output {
        wait(self.spawn())
    }
}

/// Waits for the child (killing it after the test timeout) and collects its output.
pub fn wait(mut child: Child) -> Output {
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let t_out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let t_err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let deadline = Instant::now() + TIMEOUT;
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("command timed out after {TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        code: status.code().unwrap_or(-1),
        stdout: t_out.join().unwrap(),
        stderr: t_err.join().unwrap(),
    }
}

/// Polls `cond` every 20 ms for at most `limit`.
pub fn wait_for(limit: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// A roles folder whose generator copies prepared tests from `$TT_FIXTURE_TESTS/<layer>/`.
pub fn copy_roles(p: &Project) -> PathBuf {
    let dir = fixtures().join("roles/copy-tests/generator");
    let text = std::fs::read_to_string(dir.join("role.md")).unwrap();
    p.write_role(
        "generator",
        &text.replace("{role_dir}", dir.to_str().unwrap()),
    )
}

/// `tests/fixtures/generated/<name>`: prepared tests per layer, for [`copy_roles`].
pub fn generated(name: &str) -> String {
    fixtures()
        .join("generated")
        .join(name)
        .display()
        .to_string()
}

/// tests/fixtures/agents/fake_agent.py: a program that behaves like an agent CLI.
pub fn fake_agent() -> String {
    fixtures()
        .join("agents/fake_agent.py")
        .display()
        .to_string()
}

/// A team-testing.toml in the test's temp folder; returns its path.
pub fn config(p: &Project, text: &str) -> PathBuf {
    let path = p.tmp.path().join("team-testing.toml");
    std::fs::write(&path, text).unwrap();
    path
}

pub fn cli_config(p: &Project, timeout_s: u64) -> PathBuf {
    config(
        p,
        &format!(
            "[backends.fake]\nkind = \"cli\"\ncommand = [\"python3\", {:?}]\ntimeout_s = {timeout_s}\n",
            fake_agent()
        ),
    )
}

/// The session's (first) generator task.
pub fn generator_task(p: &Project, id: &str) -> Value {
    p.tasks(id)
        .into_iter()
        .find(|t| t["owner"] == "generator")
        .expect("a generator task")
}

/// A team config with no GC rounds (the tests that look at one run), written into the
/// project's temp folder; its path for `--spec`.
pub fn one_round_spec(p: &Project) -> String {
    let mut config =
        read_json(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("specs/team-config.json"));
    config["max_gc_rounds"] = 0.into();
    let spec = p.tmp.path().join("one-round.json");
    std::fs::write(&spec, config.to_string()).unwrap();
    spec.to_str().unwrap().to_string()
}

/// Runs plain pytest (`-rA`, no cache) in `dir`, unsandboxed, as an unprivileged user: as
/// `nobody` with Debian's /usr/bin/python3 and a readable copy of this machine's pytest when
/// the tests run as root (then `dir` and `owned` are given to nobody first, so file
/// permissions protect nothing), as the current user otherwise.
pub fn plain_pytest_as_user(dir: &Path, owned: &[&Path], env: &[(&str, &str)]) -> Output {
    // SAFETY: getuid cannot fail.
    let root = unsafe { libc::getuid() } == 0;
    let python = Path::new("/usr/bin/python3");
    let mut c = if root && python.exists() && Path::new("/usr/bin/setpriv").exists() {
        let site = readable_pytest();
        for path in std::iter::once(&dir).chain(owned) {
            let ok = Command::new("chown")
                .args(["-R", "65534:65534"])
                .arg(path)
                .status()
                .expect("chown runs");
            assert!(ok.success(), "chown {}", path.display());
        }
        let mut c = Command::new("/usr/bin/setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(python)
            .env("PYTHONPATH", site);
        c
    } else {
        Command::new("python3")
    };
    c.args(["-m", "pytest", "-rA", "-p", "no:cacheprovider"])
        .current_dir(dir)
        .env("PYTHONDONTWRITEBYTECODE", "1");
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().expect("pytest starts");
    Output {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// pytest and what it imports, copied where any user can read them (root's own Python is
/// usually in a folder only root can enter); made once per test process.
fn readable_pytest() -> PathBuf {
    static SITE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    SITE.get_or_init(|| {
        let out = Command::new("python3")
            .args([
                "-c",
                "import os, pytest; print(os.path.dirname(os.path.dirname(pytest.__file__)))",
            ])
            .output()
            .expect("python3 runs");
        let from = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        let site = std::env::temp_dir().join(format!("tt-readable-pytest-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&site);
        std::fs::create_dir_all(&site).unwrap();
        // The packages and their metadata (pytest asks for its plugins' versions).
        let wanted = [
            "pytest",
            "_pytest",
            "pluggy",
            "iniconfig",
            "packaging",
            "py.py",
        ];
        for entry in std::fs::read_dir(&from).unwrap().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let base = name.split(['-', '.']).next().unwrap_or("");
            if wanted.contains(&name.as_str()) || wanted.contains(&base) {
                let src = entry.path();
                let ok = Command::new("cp")
                    .arg("-r")
                    .arg(&src)
                    .arg(&site)
                    .status()
                    .unwrap();
                assert!(ok.success());
            }
        }
        let ok = Command::new("chmod")
            .args(["-R", "a+rX"])
            .arg(&site)
            .status()
            .unwrap();
        assert!(ok.success());
        site
    })
    .clone()
}

/// Whether the file-system watch works on this machine (as `team-testing sandbox` says).
pub fn watch_available() -> bool {
    static AVAILABLE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        let out = Command::new(BIN)
            .args(["sandbox", "--json"])
            .output()
            .expect("binary starts");
        let v: Value = serde_json::from_slice(&out.stdout).expect("sandbox --json");
        v["watch"].is_null()
    })
}

/// A run record's kept tests ran under the file-system watch, where the machine has it.
pub fn assert_watched(run: &Value) {
    if watch_available() {
        assert_eq!(
            run["watch"]["checked"], true,
            "not watched: {}",
            run["watch"]
        );
    } else {
        assert_eq!(run["watch"]["checked"], false, "{}", run["watch"]);
    }
}

/// Whether cargo-llvm-cov runs here (.ci/run installs it; without it Rust coverage is unknown).
/// The outcome of a session's generator task for a layer.
pub fn generator_outcome(p: &Project, id: &str, layer: &str) -> Value {
    p.tasks(id)
        .into_iter()
        .find(|t| t["owner"] == "generator" && t["layer"] == layer)
        .unwrap_or_else(|| panic!("no {layer} generator task"))["outcome"]
        .clone()
}

/// Line coverage of `files` (repository-relative) in a session's first run, in percent.
pub fn first_run_coverage(p: &Project, id: &str, files: &[&str]) -> f64 {
    let coverage = read_json(&p.session_dir(id).join("results/coverage-001.json"));
    let (mut total, mut covered) = (0, 0);
    for f in coverage["files"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| files.contains(&f["path"].as_str().unwrap()))
    {
        total += f["lines_total"].as_u64().unwrap();
        covered += f["lines_covered"].as_u64().unwrap();
    }
    assert!(total > 0, "no coverage of {files:?}: {coverage}");
    100.0 * covered as f64 / total as f64
}

/// The layer's files as the generator wrote them, before the analyst's minimization (which
/// keeps the unminimized ones in `workspace/unminimized/<layer>/`): what a seed decides.
pub fn generator_output(
    p: &Project,
    id: &str,
    layer: &str,
) -> std::collections::BTreeMap<String, String> {
    let kept = p.session_dir(id).join("workspace/unminimized").join(layer);
    let mut files = generated_files(p, id, layer);
    for entry in std::fs::read_dir(&kept).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        files.insert(name, std::fs::read_to_string(entry.path()).unwrap());
    }
    files
}

/// A session's generated files of a layer: file name -> text.
pub fn generated_files(
    p: &Project,
    id: &str,
    layer: &str,
) -> std::collections::BTreeMap<String, String> {
    let dir = p.session_dir(id).join("tests").join(layer);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Default::default();
    };
    entries
        .flatten()
        .filter(|e| e.path().is_file())
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read_to_string(e.path()).unwrap(),
            )
        })
        .collect()
}

pub fn has_llvm_cov() -> bool {
    std::process::Command::new("cargo")
        .args(["llvm-cov", "--version"])
        .output()
        .is_ok_and(|o| o.status.success())
}
