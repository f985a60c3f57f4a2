//! Dynamic roles: a role added to a running or paused session (`roles add`, or the coordinator's
//! handleAdapt after a `capability_gap`). Here the role files: read, checked against the
//! machine (a command on PATH), installed in the session's role-specs/. The rules on the graph
//! (the cap, the task, its wiring) are in [`rules`]; whoever holds the session's lock applies them.

pub mod rules;

use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::roles::{Backend, Registry, RoleSource, RoleSpec};
use crate::session::inbox::RoleRequest;
use crate::session::SessionDir;
use crate::tasks::{Task, TaskGraph};
use crate::util::{atomic_write, mkdirs};
use rules::{check_cap, insert_role_task, role_task};

/// The roles with a built-in implementation: any other builtin-backend role needs an agent.
const BUILTIN_IMPLEMENTED: [&str; 5] = [
    "coordinator",
    "strategist",
    "generator",
    "executor",
    "analyst",
];

/// Checks a new role's file against the session: a new name, a prefix of its own, a backend that
/// can run it (a command on PATH, or agent backends that exist).
pub fn check_spec(
    registry: &Registry,
    graph: &TaskGraph,
    spec: &RoleSpec,
    known_backend: impl Fn(&str) -> bool,
) -> Result<(), Error> {
    let bad = |problem: String| Error::BadRole {
        path: PathBuf::from(spec.source_label()),
        role: spec.name.clone(),
        problem,
    };
    // A role left in role-specs/ by an add that failed half-way (no task owns it) is replaced.
    let leftover = registry.get(&spec.name).is_some_and(|r| {
        matches!(r.source, RoleSource::Session(_)) && !graph.tasks.iter().any(|t| t.owner == r.name)
    });
    if let Some(existing) = registry.get(&spec.name).filter(|_| !leftover) {
        return Err(bad(format!(
            "a role named {} already exists ({}); a dynamic role needs a new name",
            spec.name,
            existing.source_label()
        )));
    }
    if spec.prefix.is_none() {
        return Err(bad(
            "a dynamic role needs a prefix: its task is <PREFIX>-001".into(),
        ));
    }
    // Registry::insert refuses a prefix another role has.
    registry.clone().insert(spec.clone())?;
    match &spec.backend {
        Backend::Command { argv } => {
            let program = &argv[0];
            if !program.contains('{')
                && !program.contains('/')
                && crate::agents::backends::on_path(program).is_none()
            {
                return Err(bad(format!("command '{program}' is not on PATH")));
            }
        }
        Backend::Builtin if BUILTIN_IMPLEMENTED.contains(&spec.name.as_str()) => {}
        Backend::Builtin => {
            let agents = spec.agent.clone().unwrap_or_default();
            if agents.iter().all(|a| a == "builtin") {
                return Err(bad(format!(
                    "team-testing has no built-in implementation of role {}: use backend: command, \
                     or name the agent backend that does its work (agent: [claude])",
                    spec.name
                )));
            }
            if let Some(unknown) = agents.iter().find(|a| !known_backend(a)) {
                return Err(bad(format!(
                    "unknown backend '{unknown}' in agent: (not a preset, nor in team-testing.toml)"
                )));
            }
        }
    }
    Ok(())
}

/// Applies `roles add` to a session no coordinator holds: checks the role file, the cap and
/// the wiring, installs the file in the session's role-specs/, registers the role and inserts
/// its task. On error nothing is changed or copied.
pub fn add_role(
    session: &SessionDir,
    registry: &mut Registry,
    graph: &mut TaskGraph,
    request: &RoleRequest,
    max_roles: usize,
    known_backend: impl Fn(&str) -> bool,
    now: &str,
) -> Result<(RoleSpec, Task), Error> {
    let (spec, text) = read_role(&request.spec)?;
    check_spec(registry, graph, &spec, known_backend)?;
    check_cap(graph, &spec.name, max_roles)?;
    let after = request.after.as_deref();
    let task = role_task(
        graph,
        &spec,
        after,
        &session.root,
        "added with roles add",
        now,
    );
    let mut next = graph.clone();
    insert_role_task(&mut next, task.clone(), after, &request.before, |r| {
        registry.contains(r) || r == spec.name
    })?;
    let installed = install_role(session, &request.spec, &spec, &text)?;
    registry.insert(installed)?;
    *graph = next;
    let spec = registry.get(&spec.name).cloned().expect("registered above");
    Ok((spec, task))
}

/// Reads and parses the role file a `roles add` request names: the role and the file's text.
pub fn read_role(file: &Path) -> Result<(RoleSpec, String), Error> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| Error::io(format!("reading role file {}", file.display()), e))?;
    let spec = RoleSpec::parse(&text, file, RoleSource::Session(file.to_path_buf()))?;
    Ok((spec, text))
}

/// Copies a checked role file into the session's role-specs/ (a `role.md` with its whole folder,
/// for the scripts beside it) and returns the role as the session now has it.
pub fn install_role(
    session: &SessionDir,
    file: &Path,
    spec: &RoleSpec,
    text: &str,
) -> Result<RoleSpec, Error> {
    let specs = session.root.join("role-specs");
    let dest = if file.file_name().is_some_and(|n| n == "role.md") {
        let folder = specs.join(&spec.name);
        let from = file.parent().unwrap_or(Path::new("."));
        copy_role_folder(from, &folder)?;
        folder.join("role.md")
    } else {
        mkdirs(&specs)?;
        let file = specs.join(format!("{}.md", spec.name));
        atomic_write(&file, text.as_bytes())?;
        file
    };
    read_installed(&dest)
}

/// handleAdapt's template `name` as the session will have it (role-specs/<name>/role.md),
/// before anything is written.
pub fn template_spec(session: &SessionDir, name: &str) -> Result<RoleSpec, Error> {
    let role_file = template_folder(session, name).join("role.md");
    let (_, text) = template_files(name)?
        .iter()
        .find(|(f, _)| *f == "role.md")
        .expect("templates have role.md");
    RoleSpec::parse(text, &role_file, RoleSource::Session(role_file.clone()))
}

/// Writes template `name`'s files into role-specs/<name>/ and returns its role as installed.
pub fn install_template(session: &SessionDir, name: &str) -> Result<RoleSpec, Error> {
    let files = template_files(name)?;
    let folder = template_folder(session, name);
    mkdirs(&folder)?;
    for (file, content) in files {
        atomic_write(&folder.join(file), content.as_bytes())?;
    }
    read_installed(&folder.join("role.md"))
}

fn template_files(name: &str) -> Result<&'static [(&'static str, &'static str)], Error> {
    TEMPLATE_FILES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, files)| *files)
        .ok_or_else(|| Error::Usage(format!("no role template named {name}")))
}

fn template_folder(session: &SessionDir, name: &str) -> PathBuf {
    session.root.join("role-specs").join(name)
}

/// A role file installed in the session, read back the way a resume will read it.
fn read_installed(file: &Path) -> Result<RoleSpec, Error> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| Error::io(format!("reading {}", file.display()), e))?;
    RoleSpec::parse(&text, file, RoleSource::Session(file.to_path_buf()))
}

/// A role's folder (its role.md and the scripts beside it): regular files only, bounded.
fn copy_role_folder(from: &Path, to: &Path) -> Result<(), Error> {
    const MAX_FILES: usize = 200;
    const MAX_BYTES: u64 = 16 << 20;
    let mut stack = vec![(from.to_path_buf(), to.to_path_buf())];
    let (mut files, mut bytes) = (0usize, 0u64);
    while let Some((src, dst)) = stack.pop() {
        mkdirs(&dst)?;
        let entries = std::fs::read_dir(&src)
            .map_err(|e| Error::io(format!("reading {}", src.display()), e))?;
        for e in entries.flatten() {
            let Ok(kind) = e.file_type() else { continue };
            let name = e.file_name();
            if kind.is_dir() && name != "__pycache__" && name != ".git" {
                stack.push((e.path(), dst.join(&name)));
            } else if kind.is_file() {
                files += 1;
                bytes += e.metadata().map(|m| m.len()).unwrap_or(0);
                if files > MAX_FILES || bytes > MAX_BYTES {
                    return Err(Error::bad_file(
                        from,
                        format!("a role folder may hold at most {MAX_FILES} files and 16 MiB"),
                    ));
                }
                crate::util::copy_nofollow(&e.path(), &dst.join(&name))
                    .map_err(|err| Error::io(format!("copying {}", e.path().display()), err))?;
            }
        }
    }
    Ok(())
}

/// The template files, built into the binary; `roles/templates/` in the source tree.
pub const TEMPLATE_FILES: [(&str, &[(&str, &str)]); 3] = [
    (
        "lint",
        &[
            (
                "role.md",
                include_str!("../../../roles/templates/lint/role.md"),
            ),
            (
                "run.py",
                include_str!("../../../roles/templates/lint/run.py"),
            ),
        ],
    ),
    (
        "mutation",
        &[
            (
                "role.md",
                include_str!("../../../roles/templates/mutation/role.md"),
            ),
            (
                "run.py",
                include_str!("../../../roles/templates/mutation/run.py"),
            ),
        ],
    ),
    (
        "security-scan",
        &[
            (
                "role.md",
                include_str!("../../../roles/templates/security-scan/role.md"),
            ),
            (
                "run.py",
                include_str!("../../../roles/templates/security-scan/run.py"),
            ),
        ],
    ),
];

#[cfg(test)]
mod tests {
    use super::rules::{roles_in_use, template_for};
    use super::*;

    fn spec(text: &str) -> RoleSpec {
        RoleSpec::parse(
            text,
            Path::new("extra/role.md"),
            RoleSource::Session("extra/role.md".into()),
        )
        .unwrap()
    }

    const LINT: &str = "---\nrole: lint\nprefix: LINT\ninner_loop: false\nmessage_types: [progress]\nbackend: command\ncommand: [\"python3\", \"-c\", \"pass\"]\ndescription: Lints the code.\n---\nbody";

    fn standard() -> (Registry, TaskGraph) {
        let config = crate::pipeline::config::TeamConfig::builtin().unwrap();
        let tasks = crate::pipeline::select::build_tasks(
            &config,
            "standard",
            "S",
            "x",
            |_| "r".into(),
            "t",
        )
        .unwrap();
        (Registry::load(None).unwrap(), TaskGraph::new(tasks))
    }

    #[test]
    fn the_cap_counts_the_coordinator_and_refuses_one_role_too_many() {
        let (_, graph) = standard();
        assert_eq!(roles_in_use(&graph).len(), 5);
        let err = check_cap(&graph, "lint", 5).unwrap_err().to_string();
        assert!(err.contains("5 roles in use"), "{err}");
        assert!(err.contains("--max-roles 6"), "{err}");
        check_cap(&graph, "lint", 6).unwrap();
        check_cap(&graph, "executor", 5).unwrap();
    }

    #[test]
    fn a_duplicate_prefix_a_known_name_or_an_unknown_backend_is_refused() {
        let (registry, graph) = standard();
        check_spec(&registry, &graph, &spec(LINT), |_| true).unwrap();
        let dup = LINT.replace("prefix: LINT", "prefix: TESTRUN");
        assert!(check_spec(&registry, &graph, &spec(&dup), |_| true)
            .unwrap_err()
            .to_string()
            .contains("prefix TESTRUN is already used"));
        let known = LINT.replace("role: lint", "role: executor");
        assert!(check_spec(&registry, &graph, &spec(&known), |_| true)
            .unwrap_err()
            .to_string()
            .contains("already exists"));
        let agent = "---\nrole: reviewer\nprefix: REVIEW\ninner_loop: false\nmessage_types: []\nbackend: builtin\nagent: [nosuch]\n---\nbody";
        let err = check_spec(&registry, &graph, &spec(agent), |b| b == "claude")
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown backend 'nosuch'"), "{err}");
        let missing = LINT.replace("\"python3\"", "\"no-such-linter-xyz\"");
        assert!(check_spec(&registry, &graph, &spec(&missing), |_| true)
            .unwrap_err()
            .to_string()
            .contains("not on PATH"));
    }

    #[test]
    fn after_rewires_the_waiters_and_before_blocks_a_pending_task() {
        let (_, mut graph) = standard();
        let s = spec(LINT);
        let task = role_task(
            &graph,
            &s,
            Some("TESTRUN-001"),
            Path::new("S"),
            "roles add",
            "t",
        );
        assert_eq!(task.id, "LINT-001");
        insert_role_task(
            &mut graph,
            task,
            Some("TESTRUN-001"),
            &["TESTANA-001".into()],
            |_| true,
        )
        .unwrap();
        assert_eq!(graph.get("LINT-001").unwrap().blocked_by, ["TESTRUN-001"]);
        assert_eq!(graph.get("TESTGEN-002").unwrap().blocked_by, ["LINT-001"]);
        assert_eq!(
            graph.get("TESTANA-001").unwrap().blocked_by,
            ["TESTRUN-002", "LINT-001"]
        );
        let again = role_task(&graph, &s, None, Path::new("S"), "x", "t");
        assert_eq!(again.id, "LINT-002");
        let err = insert_role_task(&mut graph, again, Some("NOPE-9"), &[], |_| true).unwrap_err();
        assert!(err.to_string().contains("--after NOPE-9"), "{err}");
    }

    #[test]
    fn gaps_find_their_template() {
        assert_eq!(template_for(Some("lint"), ""), Some("lint"));
        assert_eq!(
            template_for(None, "no static analysis of the changed files"),
            Some("lint")
        );
        assert_eq!(
            template_for(None, "are the tests strong? run mutation testing"),
            Some("mutation")
        );
        assert_eq!(template_for(Some("bandit"), ""), Some("security-scan"));
        assert_eq!(template_for(None, "make coffee"), None);
    }
}
