//! `apply --fixes`: a session's code fixes (a test-fix cycle's combined patch and manifest) go into
//! the user's repository only onto the files they were made from, with a diffstat first.
//!
//! The session is a real one (`run --dry-run`); its `fixes/` is made here the way the cycle makes
//! it: a worktree on a branch of its own whose first commit is the user's HEAD plus their
//! uncommitted changes, the fix committed on it, and `git diff --binary base head`.

use std::path::{Path, PathBuf};
use std::process::Command;

use team_testing::agents::record::sha256_hex;
use team_testing::artifacts::{FixManifest, FixPatch, FixedFile, COMBINED_PATCH, FIXES_MANIFEST};

use crate::common::*;

const FIXED_MEAN: &str = "def mean(values: list) -> float:\n    if not values:\n        return 0.0\n    return sum(values) / len(values)\n";
const EXTRA: &str =
    "\"\"\"Helpers the fix added.\"\"\"\n\n\ndef half(x: float) -> float:\n    return x / 2\n";

/// `git ARGS` in `dir`, its stdout.
fn git_out(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "user.name=tt", "-c", "user.email=tt@example.invalid"])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn sha_of(path: &Path) -> Option<String> {
    std::fs::read(path).ok().map(|b| sha256_hex(&b))
}

struct Fixed {
    p: Project,
    id: String,
    session: PathBuf,
    /// The fix worktree.
    worktree: PathBuf,
    branch: String,
}

impl Fixed {
    fn read(&self, rel: &str) -> Option<String> {
        std::fs::read_to_string(self.p.repo.join(rel)).ok()
    }

    fn apply(&self, extra: &[&str]) -> Output {
        self.p
            .cmd(&[&["apply", &self.id, "--fixes"], extra].concat())
            .run()
    }
}

/// python-calc with an uncommitted edit of calc/ops.py, a real session of it, and fixes made
/// from the user's tree: `mean` of an empty list returns 0.0 (calc/ops.py modified),
/// calc/extra.py added, README.md deleted, over two iterations.
fn session_with_fixes() -> Fixed {
    let p = Project::fixture("python-calc");
    let out = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "test the calculator",
            "--pipeline",
            "targeted",
            "--dry-run",
        ])
        .run();
    out.assert_code(0);
    let id = out.session_id();
    let session = p.session_dir(&id);
    // The user's uncommitted change: part of what the fixes are made from.
    let ops = p.repo.join("calc/ops.py");
    let mine = std::fs::read_to_string(&ops).unwrap() + "\n\n# my own note\n";
    std::fs::write(&ops, &mine).unwrap();
    assert_eq!(git_status(&p.repo, false), "M calc/ops.py");

    let branch = format!("team-testing/fix/{id}");
    let worktree = p.tmp.path().join("fix-worktree");
    let wt = worktree.to_str().unwrap();
    let user_head = git_out(&p.repo, &["rev-parse", "HEAD"]);
    git_out(&p.repo, &["worktree", "add", "-q", "-b", &branch, wt]);
    std::fs::write(worktree.join("calc/ops.py"), &mine).unwrap();
    git_out(&worktree, &["commit", "-q", "-am", "base: the user's tree"]);
    let base = git_out(&worktree, &["rev-parse", "HEAD"]);

    let fixed = mine.replace(
        "def mean(values: list) -> float:\n    if not values:\n        raise ValueError(\"mean of an empty list\")\n    return sum(values) / len(values)\n",
        FIXED_MEAN,
    );
    assert_ne!(fixed, mine);
    std::fs::write(worktree.join("calc/ops.py"), &fixed).unwrap();
    git_out(
        &worktree,
        &["commit", "-q", "-am", "mean of nothing is 0.0"],
    );
    let first = git_out(&worktree, &["rev-parse", "HEAD"]);
    std::fs::write(worktree.join("calc/extra.py"), EXTRA).unwrap();
    git_out(&worktree, &["add", "calc/extra.py"]);
    git_out(&worktree, &["rm", "-q", "README.md"]);
    git_out(
        &worktree,
        &["commit", "-q", "-m", "add half, drop the README"],
    );
    let head = git_out(&worktree, &["rev-parse", "HEAD"]);

    let fixes = session.join("fixes");
    std::fs::create_dir_all(&fixes).unwrap();
    let diff = |from: &str, to: &str| {
        let out = Command::new("git")
            .args(["diff", "--binary", from, to])
            .current_dir(&worktree)
            .output()
            .unwrap();
        assert!(out.status.success());
        out.stdout
    };
    std::fs::write(fixes.join("iteration-1.patch"), diff(&base, &first)).unwrap();
    std::fs::write(fixes.join("iteration-2.patch"), diff(&first, &head)).unwrap();
    std::fs::write(session.join(COMBINED_PATCH), diff(&base, &head)).unwrap();
    let iteration = |n: u32, commit: &str, message: &str| FixPatch {
        iteration: n,
        patch: format!("fixes/iteration-{n}.patch"),
        commit: commit.into(),
        message: message.into(),
    };
    let manifest = FixManifest {
        version: 1,
        branch: branch.clone(),
        worktree: wt.into(),
        user_head,
        base_commit: base,
        head_commit: head,
        iterations: vec![
            iteration(1, &first, "mean of nothing is 0.0"),
            iteration(2, "", "add half, drop the README"),
        ],
        files: vec![
            FixedFile {
                path: "calc/ops.py".into(),
                status: FixedFile::MODIFIED.into(),
                base_sha256: Some(sha256_hex(mine.as_bytes())),
                head_sha256: Some(sha256_hex(fixed.as_bytes())),
            },
            FixedFile {
                path: "calc/extra.py".into(),
                status: FixedFile::ADDED.into(),
                base_sha256: None,
                head_sha256: Some(sha256_hex(EXTRA.as_bytes())),
            },
            FixedFile {
                path: "README.md".into(),
                status: FixedFile::DELETED.into(),
                base_sha256: sha_of(&p.repo.join("README.md")),
                head_sha256: None,
            },
        ],
    };
    std::fs::write(
        session.join(FIXES_MANIFEST),
        serde_json::to_string_pretty(&manifest).unwrap(),
    )
    .unwrap();
    Fixed {
        p,
        id,
        session,
        worktree,
        branch,
    }
}

fn assert_diffstat(f: &Fixed, out: &Output) {
    let s = &out.stdout;
    for line in [
        format!(
            "Code fixes of session {}: 2 iterations on branch {}",
            f.id, f.branch
        ),
        "  iteration 1: mean of nothing is 0.0 (".to_string(),
        "  iteration 2: add half, drop the README\n".to_string(),
        "  modified  calc/ops.py    +1 -1".to_string(),
        "  added     calc/extra.py  +5 -0".to_string(),
        "  deleted   README.md      +0 -3".to_string(),
        "  3 files changed, 6 insertions(+), 4 deletions(-)".to_string(),
    ] {
        assert!(s.contains(&line), "no {line:?} in:\n{s}\n{}", out.stderr);
    }
}

/// Every file the fixes touch, as it is in the repository now.
fn touched(f: &Fixed) -> [Option<String>; 3] {
    [
        f.read("calc/ops.py"),
        f.read("calc/extra.py"),
        f.read("README.md"),
    ]
}

#[test]
fn apply_fixes_shows_the_diffstat_applies_the_patch_and_a_second_apply_says_already_applied() {
    let f = session_with_fixes();
    let out = f.apply(&[]);
    out.assert_code(0);
    assert_diffstat(&f, &out);
    // The repository has the worktree's files exactly.
    assert_eq!(
        f.read("calc/ops.py"),
        std::fs::read_to_string(f.worktree.join("calc/ops.py")).ok()
    );
    assert!(f.read("calc/ops.py").unwrap().contains(FIXED_MEAN));
    assert!(f.read("calc/ops.py").unwrap().contains("# my own note"));
    assert_eq!(f.read("calc/extra.py").as_deref(), Some(EXTRA));
    assert!(!f.p.repo.join("README.md").exists());
    let repo = std::fs::canonicalize(&f.p.repo).unwrap();
    assert!(
        out.stdout.contains(&format!(
            "Applied to {}: the 3 files now have the fixed content (sha256 checked).",
            repo.display()
        )),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains(&format!(
            "The fix iterations are commits on branch {b}: `git -C {} log {b}`",
            repo.display(),
            b = f.branch
        )),
        "{}",
        out.stdout
    );
    // Only the working tree changed: nothing staged, nothing committed.
    assert_eq!(
        git_status(&f.p.repo, false),
        "D README.md\n M calc/ops.py\n?? calc/extra.py"
    );

    let again = f.apply(&[]);
    again.assert_code(0);
    assert!(
        again.stdout.contains(&format!(
            "The fixes of session {} are already applied: the 3 files they touch have the fixed content.",
            f.id
        )),
        "{}",
        again.stdout
    );
    assert!(!again.stdout.contains("Applied to"), "{}", again.stdout);
}

#[test]
fn apply_fixes_refuses_when_a_touched_file_changed_and_writes_nothing() {
    let f = session_with_fixes();
    // The user edits a file the fixes modify.
    let edited = f.read("calc/ops.py").unwrap() + "# one more edit\n";
    std::fs::write(f.p.repo.join("calc/ops.py"), &edited).unwrap();
    let before = touched(&f);
    let out = f.apply(&[]);
    out.assert_code(2);
    assert!(
        out.stderr.contains(&format!(
            "refusing to apply the fixes of session {}: this file changed since the fixes were made, and nothing was written:\n  calc/ops.py: edited since the fixes were made\n",
            f.id
        )),
        "{}",
        out.stderr
    );
    assert!(!out.stdout.contains("Applied"), "{}", out.stdout);
    assert_eq!(touched(&f), before, "a refused apply wrote something");
    // The command it prints shows the user's edit since the fixes' base.
    let see = out
        .stderr
        .lines()
        .find_map(|l| l.strip_prefix("Your changes since then: `"))
        .and_then(|l| l.strip_suffix('`'))
        .unwrap_or_else(|| panic!("no command in {}", out.stderr));
    let words = shlex::split(see).unwrap();
    assert_eq!(words[0], "git");
    let diff = git_out(
        &f.p.repo,
        &words[1..].iter().map(String::as_str).collect::<Vec<_>>(),
    );
    assert!(diff.contains("+# one more edit"), "{diff}");
    assert!(!diff.contains("+# my own note"), "{diff}");

    // And creates the file the fixes add.
    std::fs::write(f.p.repo.join("calc/extra.py"), "mine\n").unwrap();
    let before = touched(&f);
    let out = f.apply(&[]);
    out.assert_code(2);
    assert!(
        out.stderr.contains("these 2 files changed")
            && out
                .stderr
                .contains("  calc/ops.py: edited since the fixes were made")
            && out
                .stderr
                .contains("  calc/extra.py: exists now, and the fixes create it"),
        "{}",
        out.stderr
    );
    assert_eq!(touched(&f), before, "a refused apply wrote something");
}

#[test]
fn apply_fixes_dry_run_shows_what_would_change_and_writes_nothing() {
    let f = session_with_fixes();
    let status = git_status(&f.p.repo, true);
    let before = touched(&f);
    let out = f.apply(&["--dry-run"]);
    out.assert_code(0);
    assert_diffstat(&f, &out);
    let repo = std::fs::canonicalize(&f.p.repo).unwrap();
    assert!(
        out.stdout.contains(&format!(
            "Dry run: the fixes apply cleanly to {}; nothing was written.",
            repo.display()
        )),
        "{}",
        out.stdout
    );
    assert_eq!(touched(&f), before);
    assert_eq!(git_status(&f.p.repo, true), status);
}

#[test]
fn apply_fixes_without_fixes_or_with_a_bad_manifest_names_the_file() {
    let f = session_with_fixes();
    std::fs::write(f.session.join(FIXES_MANIFEST), "{ not json").unwrap();
    let out = f.apply(&[]);
    out.assert_code(2);
    assert!(
        out.stderr.contains("fixes/manifest.json: invalid JSON"),
        "{}",
        out.stderr
    );

    // A manifest that does not list a file the patch changes.
    std::fs::write(f.session.join(FIXES_MANIFEST), r#"{"files": []}"#).unwrap();
    let out = f.apply(&[]);
    out.assert_code(2);
    assert!(
        out.stderr.contains("fixes/manifest.json: fixes/combined.patch changes README.md, which the manifest does not list"),
        "{}",
        out.stderr
    );

    std::fs::remove_dir_all(f.session.join("fixes")).unwrap();
    let before = touched(&f);
    let out = f.apply(&[]);
    out.assert_code(2);
    assert!(
        out.stderr.contains(&format!(
            "session {} has no code fixes: {} does not exist",
            f.id,
            f.session.join(FIXES_MANIFEST).display()
        )) && out.stderr.contains("`team-testing fix`")
            && out.stderr.contains("--pipeline test-fix"),
        "{}",
        out.stderr
    );
    assert_eq!(touched(&f), before);
}

#[test]
fn apply_fixes_with_layer_or_force_is_a_usage_error() {
    let p = Project::fixture("python-calc");
    for extra in ["--force", "--layer=L1"] {
        let out = p.cmd(&["apply", "--fixes", extra]).run();
        out.assert_code(2);
        assert!(
            out.stderr.contains("cannot be used with"),
            "{extra}: {}",
            out.stderr
        );
    }
}

#[test]
fn issue31_apply_fixes_refuses_a_patch_that_makes_a_symbolic_link() {
    let f = session_with_fixes();
    // A tampered session: the fix branch gains a link out of the repository, and the combined
    // patch and the manifest (its hash too) are made to agree with it.
    let outside = f.p.tmp.path().join("outside.txt");
    std::fs::write(&outside, "not the repository's\n").unwrap();
    std::os::unix::fs::symlink(&outside, f.worktree.join("calc/link")).unwrap();
    git_out(&f.worktree, &["add", "calc/link"]);
    git_out(&f.worktree, &["commit", "-q", "-m", "a link"]);
    let head = git_out(&f.worktree, &["rev-parse", "HEAD"]);
    let manifest_path = f.session.join(FIXES_MANIFEST);
    let mut manifest: FixManifest =
        serde_json::from_str(&std::fs::read_to_string(&manifest_path).unwrap()).unwrap();
    let out = Command::new("git")
        .args(["diff", "--binary", &manifest.base_commit, &head])
        .current_dir(&f.worktree)
        .output()
        .unwrap();
    assert!(out.status.success());
    let patch = String::from_utf8(out.stdout).unwrap();
    assert!(patch.contains("new file mode 120000"), "{patch}");
    std::fs::write(f.session.join(COMBINED_PATCH), &patch).unwrap();
    manifest.head_commit = head;
    manifest.files.push(FixedFile {
        path: "calc/link".into(),
        status: FixedFile::ADDED.into(),
        base_sha256: None,
        head_sha256: Some(sha256_hex(outside.to_str().unwrap().as_bytes())),
    });
    std::fs::write(
        &manifest_path,
        serde_json::to_string_pretty(&manifest).unwrap(),
    )
    .unwrap();

    let before = touched(&f);
    for extra in [&[][..], &["--dry-run"][..]] {
        let out = f.apply(extra);
        out.assert_code(2);
        assert!(
            out.stderr.contains(&format!(
                "{}: refusing the fixes, nothing was written: calc/link is created with mode 120000 (a symbolic link)",
                f.session.join(COMBINED_PATCH).display()
            )),
            "{}",
            out.stderr
        );
        assert!(!out.stdout.contains("Applied"), "{}", out.stdout);
    }
    assert_eq!(touched(&f), before, "a refused apply wrote something");
    assert!(
        std::fs::symlink_metadata(f.p.repo.join("calc/link")).is_err(),
        "the link was made"
    );
}
