//! `team-testing doctor`: for the repository at hand, the framework and toolchain found, which
//! capabilities work here and, for those that do not, why (a tool missing, with the command
//! that installs it, or not built for the family yet), the agents and endpoints a role could use,
//! and what the sandbox can use. Each answer comes from the code the roles run: the capability
//! table (`family::support`), the toolchain probe, the backend config and the sandbox's own
//! checks.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::{family_name, support, Capability, Family, Support};
use crate::agents::backends::{BackendConfig, BackendSpec};
use crate::sandbox::{Protections, SandboxSettings};
use crate::testing::framework::Framework;
use crate::testing::toolchain::Toolchain;

/// The whole check, as printed and as `--json`.
#[derive(Debug, Serialize)]
pub struct Checkup {
    pub repo: PathBuf,
    /// The framework's name, or None with `framework_reason` saying why none was found.
    pub framework: Option<String>,
    pub framework_reason: String,
    pub family: Option<&'static str>,
    pub toolchain: Option<Toolchain>,
    pub capabilities: Vec<CapabilityCheck>,
    pub agents: Vec<AgentCheck>,
    pub sandbox: SandboxCheck,
}

/// One capability here: ready, missing a tool (with the install), or not built yet.
#[derive(Debug, Serialize)]
pub struct CapabilityCheck {
    pub capability: Capability,
    pub label: &'static str,
    pub state: State,
    /// What works, or why it does not.
    pub detail: String,
    /// The command that makes it work, when a tool is missing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub install: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    Ready,
    Missing,
    NotYet,
}

/// An agent backend a role could be given: a CLI found on PATH or not, an endpoint configured.
#[derive(Debug, Serialize)]
pub struct AgentCheck {
    pub name: String,
    pub kind: &'static str,
    pub usable: bool,
    pub detail: String,
}

#[derive(Debug, Serialize)]
pub struct SandboxCheck {
    pub protections: Protections,
    /// None when the file-system watch works here, else why not.
    pub watch_unavailable: Option<String>,
}

/// Checks `repo` with the backend config (`--config` or the repository's) and the sandbox
/// settings a run would use.
pub fn check(repo: &Path, config: &BackendConfig, sandbox: &SandboxSettings) -> Checkup {
    let files = crate::testing::detect::walk(repo);
    let (framework, framework_reason) = crate::testing::detect::detect_framework(repo, &files);
    let toolchain = framework.map(|f| super::toolchain(repo, Some(f)));
    let agents = agents(config);
    let protections = sandbox.protections();
    let watch_unavailable = crate::sandbox::watch::support()
        .as_ref()
        .err()
        .map(ToString::to_string);
    let here = Here {
        toolchain: toolchain.as_ref(),
        agents: &agents,
        sandbox_on: sandbox.enabled,
        contained: protections.filesystem_contained,
        watch_unavailable: watch_unavailable.as_deref(),
    };
    let capabilities = Capability::ALL
        .into_iter()
        .map(|c| capability(framework, c, &here))
        .collect();
    Checkup {
        repo: repo.to_path_buf(),
        framework: framework.map(|f| f.to_string()),
        framework_reason,
        family: framework.map(|f| family_name(f.family())),
        toolchain,
        capabilities,
        agents,
        sandbox: SandboxCheck {
            protections,
            watch_unavailable,
        },
    }
}

/// What this machine and repository offer, for the per-capability checks.
struct Here<'a> {
    toolchain: Option<&'a Toolchain>,
    agents: &'a [AgentCheck],
    sandbox_on: bool,
    contained: bool,
    watch_unavailable: Option<&'a str>,
}

fn capability(
    framework: Option<Framework>,
    capability: Capability,
    here: &Here,
) -> CapabilityCheck {
    let make = |state, detail: String, install: Option<String>| CapabilityCheck {
        capability,
        label: capability.label(),
        state,
        detail,
        install,
    };
    let (Some(framework), Some(tools)) = (framework, here.toolchain) else {
        return make(
            State::Missing,
            "no test framework detected in this folder".into(),
            None,
        );
    };
    let family = framework.family();
    if let Support::NotYet(reason) = support(family, capability) {
        return make(State::NotYet, reason.to_string(), None);
    }
    match tool_check(family, capability, tools, here) {
        Ok(detail) => make(State::Ready, detail, None),
        Err((detail, install)) => make(State::Missing, detail, install),
    }
}

/// Ready (what works) or missing (why, and the install when a command gives it) for a built
/// capability, from the tools found here.
fn tool_check(
    family: Family,
    capability: Capability,
    tools: &Toolchain,
    here: &Here,
) -> Result<String, (String, Option<String>)> {
    let runner = || {
        if tools.runner_available {
            Ok(())
        } else {
            Err((
                format!("{} is not available", tools.runner.join(" ")),
                tools.install_hint.clone(),
            ))
        }
    };
    let coverage_py = || {
        if tools.coverage_tool.as_deref() == Some("coverage.py") {
            Ok(())
        } else {
            Err((
                format!("coverage.py is needed: {}", tools.coverage_reason),
                Some(format!("{} -m pip install coverage", tools.interpreter)),
            ))
        }
    };
    match capability {
        Capability::OwnSuite => {
            runner()?;
            Ok(match &tools.coverage_tool {
                Some(cov) => format!("{} with {cov}", tools.runner.join(" ")),
                None => format!(
                    "{}; coverage unknown: {}",
                    tools.runner.join(" "),
                    tools.coverage_reason
                ),
            })
        }
        Capability::Generator => {
            runner()?;
            if family == Family::Python && !here.contained {
                return Err((
                    "the built-in generator runs the project's code only inside a file-system \
                     sandbox, and none is available here (see `team-testing sandbox`)"
                        .into(),
                    None,
                ));
            }
            Ok(match family {
                Family::Node => format!(
                    "ttgen.mjs on {} {}",
                    tools.interpreter,
                    tools.interpreter_version.as_deref().unwrap_or("")
                )
                .trim_end()
                .to_string(),
                Family::Cargo => crate::family::rust::generator_readiness(),
                Family::Go => crate::family::go::generator_readiness(),
                _ => "ttgen.py, a search with no LLM".into(),
            })
        }
        Capability::AgentGeneration => {
            let usable: Vec<&str> = here
                .agents
                .iter()
                .filter(|a| a.usable)
                .map(|a| a.name.as_str())
                .collect();
            if usable.is_empty() {
                Err((
                    "no agent CLI on PATH and no endpoint configured (team-testing.toml)".into(),
                    None,
                ))
            } else {
                Ok(format!("with --backend generator={}", usable.join("|")))
            }
        }
        Capability::Mutation => {
            if !here.sandbox_on {
                return Err((
                    "mutation analysis needs the sandbox (a mutant may write anywhere)".into(),
                    None,
                ));
            }
            let analysis = crate::family::of(family)
                .suite_analysis()
                .ok_or_else(|| ("no mutation analysis for this language".to_string(), None))?;
            if family == Family::Python {
                // With the command that installs it.
                coverage_py()?;
            }
            if let Some(why) = analysis.unready(tools) {
                return Err((why, None));
            }
            Ok(match family {
                Family::Python => "mutants of the covered modules, run against the kept suites",
                Family::Node => "mutants of the covered modules (operators, conditions, returns, bodies), each run with the test files that reach it",
                Family::Cargo => "mutants of the covered functions (bodies replaced, operators swapped; cargo-mutants' list when it is installed), one incremental build each",
                Family::Go => "mutants through go/ast (operators, conditions, returns, statements), each run with go test -overlay and the tests that reach it",
            }
            .into())
        }
        Capability::TestFix => {
            let trace = crate::family::of(family)
                .suite_trace()
                .ok_or_else(|| ("no per-test traces for this language".to_string(), None))?;
            if family == Family::Python {
                // With the command that installs it.
                coverage_py()?;
            }
            if let Some(why) = trace.unready(tools) {
                return Err((why, None));
            }
            let agent = here.agents.iter().any(|a| a.usable);
            Ok(if agent {
                "fault localisation, the fix plan and the fix with --backend fixer=<agent>".into()
            } else {
                "fault localisation and the fix plan; fixing itself needs an agent backend".into()
            })
        }
        Capability::EffectsCheck => {
            let audit = if family == Family::Python {
                "Python's audit events, then "
            } else {
                ""
            };
            match here.watch_unavailable {
                None => Ok(format!(
                    "{audit}the file-system watch (every write of a checked test is listed)"
                )),
                Some(why) if family == Family::Python => Ok(format!(
                    "Python's audit events only; the file-system watch is not available: {why}"
                )),
                Some(why) => Err((
                    format!("the file-system watch is not available: {why}"),
                    None,
                )),
            }
        }
    }
}

/// Every configured backend but the built-in one: a CLI found on PATH or not, an endpoint with
/// its key variable set or not.
fn agents(config: &BackendConfig) -> Vec<AgentCheck> {
    config
        .backends
        .iter()
        .filter_map(|(name, spec)| match spec {
            BackendSpec::Builtin => None,
            BackendSpec::Cli { command, .. } => {
                let program = command.first().map(String::as_str).unwrap_or("");
                let found = crate::agents::backends::on_path(program);
                Some(AgentCheck {
                    name: name.clone(),
                    kind: "cli",
                    usable: found.is_some(),
                    detail: match found {
                        Some(path) => format!("{program} at {}", path.display()),
                        None => format!("{program} is not on PATH"),
                    },
                })
            }
            BackendSpec::Http {
                base_url,
                model,
                api_key_env,
                ..
            } => {
                let key_missing = api_key_env
                    .as_deref()
                    .filter(|var| std::env::var_os(var).is_none_or(|v| v.is_empty()));
                Some(AgentCheck {
                    name: name.clone(),
                    kind: "endpoint",
                    usable: key_missing.is_none(),
                    detail: match key_missing {
                        None => format!("{model} at {base_url}"),
                        Some(var) => format!("{model} at {base_url}; ${var} is not set"),
                    },
                })
            }
        })
        .collect()
}

/// The check as text, one line per fact.
pub fn render(c: &Checkup) -> String {
    let mut out = Vec::new();
    out.push(format!("repository:  {}", c.repo.display()));
    match (&c.framework, &c.toolchain) {
        (Some(f), Some(t)) => {
            out.push(format!(
                "framework:   {f} ({}), {}",
                c.family.unwrap_or(""),
                c.framework_reason
            ));
            let version = t
                .interpreter_version
                .as_deref()
                .unwrap_or("version unknown");
            out.push(format!("toolchain:   {} ({version})", t.interpreter));
            out.push(format!(
                "runner:      {}{}",
                t.runner.join(" "),
                if t.runner_available { "" } else { " (missing)" }
            ));
            out.push(format!(
                "coverage:    {}",
                t.coverage_tool.as_deref().unwrap_or(&t.coverage_reason)
            ));
        }
        _ => out.push(format!("framework:   none: {}", c.framework_reason)),
    }
    out.push(String::new());
    out.push("capabilities:".into());
    for cap in &c.capabilities {
        let mark = match cap.state {
            State::Ready => "ready   ",
            State::Missing => "missing ",
            State::NotYet => "not yet ",
        };
        out.push(format!("  {mark} {}: {}", cap.label, cap.detail));
        if let Some(install) = &cap.install {
            out.push(format!("           install: {install}"));
        }
    }
    out.push(String::new());
    out.push("agents:".into());
    for a in &c.agents {
        let mark = if a.usable { "ready   " } else { "missing " };
        out.push(format!("  {mark} {} ({}): {}", a.name, a.kind, a.detail));
    }
    out.push(String::new());
    let p = &c.sandbox.protections;
    out.push(format!("sandbox:     filesystem: {}", p.filesystem));
    out.push(format!("             network: {}", p.network));
    out.push(format!(
        "             watch: {}",
        c.sandbox
            .watch_unavailable
            .as_deref()
            .map_or("available".to_string(), |w| format!("not available: {w}"))
    ));
    for m in &p.missing {
        out.push(format!("             missing: {m}"));
    }
    out.join("\n")
}
