//! mocha kept loaded between a mutation analysis' runs. Starting node and mocha takes about
//! 0.25 s and a mutant's tests about 10 ms, so a resident mocha (mocha_worker.cjs, confined
//! like every run) takes each run's request instead. It reads the project's configuration as
//! mocha's command line does and reloads every module outside node_modules before each run.
//! CommonJS packages only: ES modules cannot be unloaded. Whenever it cannot answer (it is
//! not ready for this project, or it ended), the run is made the usual way, one mocha per run.

use std::path::PathBuf;
use std::time::Duration;

use super::ctx::Ctx;
use super::run::Coverage;
use crate::proc::resident::{Resident, ResidentError};
use crate::proc::Captured;
use crate::testing::framework::Framework;
use crate::testing::runner::RunOutput;

const WORKER: &str = include_str!("mocha_worker.cjs");

/// After this many runs in a row that ended the worker, it is not started again.
const MAX_LOSSES: u32 = 3;

/// The resident mocha of one package copy.
pub(super) struct WarmMocha<'a> {
    resident: Option<Resident<'a>>,
    script: PathBuf,
    marker: String,
    /// Why it does not serve this project (then every run is a cold one).
    unready: Option<String>,
    losses: u32,
    /// The last request's number: an answer must carry it.
    seq: u64,
}

/// What the resident mocha made of a request.
pub(super) enum Warm {
    /// `out` holds the run.
    Ran,
    /// It could not run it; a cold run must.
    Cold,
}

impl<'a> WarmMocha<'a> {
    /// The resident mocha for `ctx`'s copy, when its project can have one.
    pub(super) fn new(ctx: &Ctx<'a>) -> Option<Self> {
        // TEAM_TESTING_NO_RESIDENT=1: one mocha per run, for a suite whose tests leave state
        // behind that the next run would see.
        let refused = std::env::var_os("TEAM_TESTING_NO_RESIDENT").is_some();
        if refused || ctx.framework != Framework::Mocha || ctx.is_esm_package() {
            return None;
        }
        let script = ctx.scratch.join("mocha_worker.cjs");
        crate::util::write_nofollow(&script, WORKER.as_bytes()).ok()?;
        let nonce = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos();
        Some(WarmMocha {
            resident: None,
            script,
            marker: format!("@@team-testing-mocha-{nonce}@@"),
            unready: None,
            losses: 0,
            seq: 0,
        })
    }

    /// Runs `files` (in the copy) without coverage within `timeout`, into `out`.
    pub(super) fn run(
        &mut self,
        ctx: &Ctx<'a>,
        files: &[PathBuf],
        timeout: Duration,
        out: &mut RunOutput,
    ) -> Warm {
        if self.unready.is_some() {
            return Warm::Cold;
        }
        // ES modules stay loaded once imported: a mutant of one would never be seen.
        let esm = |f: &PathBuf| f.extension().is_some_and(|e| e == "mjs" || e == "mts");
        if files.iter().any(esm) {
            return Warm::Cold;
        }
        let junit = ctx.result_file("junit", "xml").0;
        let _ = std::fs::remove_file(&junit);
        self.seq += 1;
        let request =
            serde_json::json!({ "seq": self.seq, "files": files, "junit": junit }).to_string();
        let marker = self.marker.clone();
        let Some(resident) = self.resident(ctx) else {
            return Warm::Cold;
        };
        let reply = match resident.ask(&request, &marker, timeout) {
            Ok(reply) => reply,
            Err(ResidentError::TimedOut { .. }) => {
                self.resident = None;
                out.timed_out = true;
                return Warm::Ran;
            }
            Err(_) => return self.lost("it ended during runs"),
        };
        let answer: serde_json::Value = serde_json::from_str(&reply.answer).unwrap_or_default();
        if let Some(why) = answer["unready"].as_str() {
            self.unready = Some(why.to_string());
            self.resident = None;
            return Warm::Cold;
        }
        if answer["seq"].as_u64() != Some(self.seq) {
            return self.lost("its answer was not to the request");
        }
        // A run that left a handle open: a mocha of its own would wait on it, so that one
        // decides, in a worker that starts afresh.
        if answer["dirty"].as_bool() == Some(true) {
            return self.lost("runs leave handles open");
        }
        self.losses = 0;
        let failures = answer["failures"].as_u64().unwrap_or(1);
        let mut argv = vec![ctx.node(), self.script.display().to_string()];
        argv.extend(files.iter().map(|f| ctx.in_copy(f)));
        out.command = argv;
        out.exit_code = Some(i32::from(failures > 0));
        let captured = Captured {
            status: out.exit_code,
            stdout: reply.stdout,
            stderr: reply.stderr,
        };
        ctx.keep_output(&captured, out);
        match ctx.read_cases(&junit, None) {
            Ok(cases) => out.cases = cases,
            Err(e) => {
                out.env_problem = Some(format!(
                    "mocha found {failures} failures and its JUnit report is unusable: {e}"
                ));
                return Warm::Ran;
            }
        }
        super::run::mark_deselected(&mut out.cases, ctx.spec.deselect);
        ctx.read_coverage(Coverage::Off, None, out);
        Warm::Ran
    }

    /// Drops the worker after a run it could not answer faithfully; after [`MAX_LOSSES`] in a
    /// row it is not started again (`why`).
    fn lost(&mut self, why: &str) -> Warm {
        self.resident = None;
        self.losses += 1;
        if self.losses >= MAX_LOSSES {
            self.unready = Some(why.into());
        }
        Warm::Cold
    }

    /// The running worker, started when there is none.
    fn resident(&mut self, ctx: &Ctx<'a>) -> Option<&mut Resident<'a>> {
        if self.resident.as_mut().is_some_and(|r| !r.alive()) {
            self.resident = None;
        }
        if self.resident.is_none() {
            let node = ctx.node();
            let script = self.script.display().to_string();
            let argv = [node.as_str(), script.as_str()];
            let sandbox = ctx
                .spec
                .sandbox
                .map(|s| s as &(dyn crate::proc::Confinement + Sync));
            let env = [("TT_MOCHA_MARKER", self.marker.as_str())];
            match Resident::start(sandbox, &argv, &ctx.copy, &env) {
                Ok(r) => self.resident = Some(r),
                Err(e) => {
                    self.unready = Some(e.to_string());
                    return None;
                }
            }
        }
        self.resident.as_mut()
    }
}
