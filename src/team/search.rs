//! The built-in generator's search over a layer's modules: split over the cluster's generators
//! when the run has shards, else run on this host, split over its cores when the family's helper
//! can run beside itself (each worker gets its modules' share of the budget, so each module is
//! searched as long as one helper would have searched it, in a fraction of the wall time), else
//! one helper over them all.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::error::{Result, RoleError};
use super::shared::gen_cache::size_weight;
use super::util::{sandbox_for, time_left};
use super::RoleContext;
use crate::family::generator::{GenJob, Generator};
use crate::family::{self, Capability, Support};
use crate::gen::{self, GenRequest, ModuleRef};
use crate::testing::framework::{Framework, SessionFramework};

/// The search over `req.modules`: split into shards on the cluster's generators when the run
/// asks for it (each shard gets its modules' share of the budget), else here. Shards that cannot
/// run make it a search here, with the reason in the progress.
pub(super) fn search(
    ctx: &RoleContext,
    framework: Framework,
    layer: &str,
    req: &GenRequest,
) -> Result<gen::GenResult> {
    // L3 searches the project's entry points, not its modules: it is not split.
    let split = req.modules.len() > 1 && !layer.starts_with("L3");
    let Some(shards) = ctx.shards.filter(|s| s.count() > 1 && split) else {
        return search_here(ctx, framework, layer, req);
    };
    let groups = split_by_size(ctx.repo, req, shards.count(), true);
    let count = groups.len();
    (ctx.progress)(
        "sharded",
        None,
        Some(format!("{count} shards on the cluster's generators")),
    );
    let timeout = time_left(ctx.deadline)?.min(Duration::from_secs_f64(req.budget_s + 60.0));
    let shard_req = super::GenShardRequest {
        task: ctx.task,
        layer,
        groups,
        timeout,
    };
    match shards.generate(shard_req, ctx.progress) {
        Ok(parts) => Ok(gen::GenResult::merge(parts, &req.modules)),
        Err(problem) => {
            (ctx.progress)(
                "shards_failed",
                None,
                Some(format!("{problem}; searching here")),
            );
            search_here(ctx, framework, layer, req)
        }
    }
}

/// The search on this host: the family's helper in a mirror of the repository, sandboxed; one
/// per worker when the modules are split over the machine's cores. A cluster worker runs a
/// generator shard through this too.
pub fn search_here(
    ctx: &RoleContext,
    framework: Framework,
    layer: &str,
    req: &GenRequest,
) -> Result<gen::GenResult> {
    let place = SearchPlace::prepare(ctx, framework, layer)?;
    let workers = ctx.config.generator_workers.min(req.modules.len());
    if workers < 2 || layer.starts_with("L3") || !place.generator.searches_side_by_side() {
        let sandbox = place.sandbox(ctx, &format!("generator-{layer}"))?;
        let job = place.job(ctx, framework, req, sandbox.as_ref())?;
        return Ok(place.generator.generate(&job)?);
    }
    let by_size = place.generator.shares_budget_by_size();
    let groups = split_by_size(ctx.repo, req, workers, by_size);
    (ctx.progress)(
        "searching",
        Some(20.0),
        Some(format!(
            "{} module(s) on {} workers side by side",
            req.modules.len(),
            groups.len()
        )),
    );
    let sandboxes = (0..groups.len())
        .map(|i| place.sandbox(ctx, &format!("generator-{layer}-{}", i + 1)))
        .collect::<Result<Vec<_>>>()?;
    let jobs = groups
        .iter()
        .zip(&sandboxes)
        .map(|(group, sandbox)| place.job(ctx, framework, group, sandbox.as_ref()))
        .collect::<Result<Vec<_>>>()?;
    let started = Instant::now();
    let parts = std::thread::scope(|s| {
        let running: Vec<_> = jobs
            .iter()
            .map(|job| s.spawn(|| place.generator.generate(job)))
            .collect();
        running
            .into_iter()
            .map(|worker| {
                worker
                    .join()
                    .unwrap_or_else(|e| std::panic::resume_unwind(e))
            })
            .collect::<Vec<_>>()
    });
    let parts = parts.into_iter().collect::<Result<Vec<_>, _>>()?;
    let mut merged = gen::GenResult::merge(parts, &req.modules);
    // The merge adds the workers' seconds; what the user waited is the wall time.
    if let Some(stats) = merged.stats.as_object_mut() {
        let wall = (started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0;
        stats.insert("seconds".into(), wall.into());
        stats.insert("workers".into(), jobs.len().into());
    }
    Ok(merged)
}

/// Why the project's family lacks `capability` (the capability table), or None when it has it.
pub(super) fn not_yet(
    framework: &SessionFramework,
    capability: Capability,
) -> Option<&'static str> {
    match framework {
        Ok(f) => match family::support(f.family(), capability) {
            Support::Built => None,
            Support::NotYet(reason) => Some(reason),
        },
        Err(_) => Some("no test framework was detected"),
    }
}

/// The mirror the helpers run in and the folders they write, made once for every worker.
struct SearchPlace {
    generator: &'static dyn Generator,
    mirror: PathBuf,
    scratch: PathBuf,
    writes: Vec<PathBuf>,
}

impl SearchPlace {
    fn prepare(ctx: &RoleContext, framework: Framework, layer: &str) -> Result<SearchPlace> {
        let (mirror, scratch) = gen::scratch_dirs(&ctx.session.root, layer);
        crate::workspace::mirror(ctx.repo, &mirror, &Default::default()).map_err(|cause| {
            RoleError::Mirror {
                into: mirror.clone(),
                cause,
            }
        })?;
        let Some(generator) = family::of(framework.family()).generator() else {
            return Err(RoleError::NotYet {
                what: Capability::Generator.label(),
                framework: framework.as_str().to_string(),
                reason: not_yet(&Ok(framework), Capability::Generator).unwrap_or_default(),
            });
        };
        generator
            .prepare_mirror(ctx.repo, &ctx.session.root, &mirror)
            .map_err(RoleError::io("prepare", &mirror))?;
        let writes = generator.write_dirs(&ctx.session.root, layer);
        for dir in &writes {
            std::fs::create_dir_all(dir).map_err(RoleError::io("create", dir))?;
        }
        Ok(SearchPlace {
            generator,
            mirror,
            scratch,
            writes,
        })
    }

    /// The sandbox of one helper (`workspace/sandbox/<name>`): a folder of its own each.
    fn sandbox(&self, ctx: &RoleContext, name: &str) -> Result<Option<crate::sandbox::Sandbox>> {
        sandbox_for(ctx, name, self.generator.read_roots(ctx.repo), &self.writes)
    }

    fn job<'a>(
        &'a self,
        ctx: &'a RoleContext,
        framework: Framework,
        req: &'a GenRequest,
        sandbox: Option<&'a crate::sandbox::Sandbox>,
    ) -> Result<GenJob<'a>> {
        // The helper stops itself at its budget; the timeout is the backstop.
        let timeout = time_left(ctx.deadline)?.min(Duration::from_secs_f64(req.budget_s + 60.0));
        Ok(GenJob {
            repo: ctx.repo,
            session: &ctx.session.root,
            mirror: &self.mirror,
            scratch: &self.scratch,
            framework,
            req,
            timeout,
            sandbox,
        })
    }
}

/// `req` split into at most `parts` requests of about the same size, each with its modules'
/// share of the budget as the helper would have given it (`by_size`: by their lines, else in
/// equal shares); the modules keep their order within a part.
fn split_by_size(repo: &Path, req: &GenRequest, parts: usize, by_size: bool) -> Vec<GenRequest> {
    let count = parts.clamp(1, req.modules.len().max(1));
    let weights: Vec<f64> = req
        .modules
        .iter()
        .map(|m| match by_size {
            true => size_weight(repo, std::slice::from_ref(m)),
            false => 1.0,
        })
        .collect();
    let mut order: Vec<usize> = (0..req.modules.len()).collect();
    order.sort_by(|&a, &b| weights[b].total_cmp(&weights[a]).then(a.cmp(&b)));
    let mut loads = vec![0.0f64; count];
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); count];
    for i in order {
        let lightest = (0..count)
            .min_by(|&a, &b| loads[a].total_cmp(&loads[b]).then(a.cmp(&b)))
            .unwrap_or(0);
        loads[lightest] += weights[i];
        members[lightest].push(i);
    }
    let total: f64 = weights.iter().sum::<f64>().max(1.0);
    members
        .into_iter()
        .zip(loads)
        .filter(|(m, _)| !m.is_empty())
        .map(|(mut m, load)| {
            m.sort_unstable();
            GenRequest {
                modules: m
                    .iter()
                    .map(|&i| req.modules[i].clone())
                    .collect::<Vec<ModuleRef>>(),
                budget_s: (req.budget_s * load / total).max(1.0),
                ..req.clone()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modules_are_split_by_size_and_each_part_gets_its_share_of_the_budget() {
        let repo = tempfile::tempdir().unwrap();
        let sizes = [("a.py", 600), ("b.py", 200), ("c.py", 300), ("d.py", 100)];
        for (name, lines) in sizes {
            std::fs::write(repo.path().join(name), "x = 1\n".repeat(lines)).unwrap();
        }
        let req = GenRequest {
            modules: sizes
                .iter()
                .map(|(f, _)| ModuleRef {
                    module: f.trim_end_matches(".py").into(),
                    file: (*f).into(),
                })
                .collect(),
            budget_s: 60.0,
            ..GenRequest::default()
        };
        let parts = split_by_size(repo.path(), &req, 2, true);
        let names = |r: &GenRequest| r.modules.iter().map(|m| m.file.clone()).collect::<Vec<_>>();
        assert_eq!(names(&parts[0]), ["a.py"]);
        assert_eq!(names(&parts[1]), ["b.py", "c.py", "d.py"]);
        assert_eq!(parts[0].budget_s, 30.0);
        assert_eq!(parts[1].budget_s, 30.0);
        // Never more parts than modules.
        assert_eq!(split_by_size(repo.path(), &req, 8, true).len(), 4);
        // A helper that shares its budget equally: two modules a part, half the budget each.
        let equal = split_by_size(repo.path(), &req, 2, false);
        let sizes: Vec<usize> = equal.iter().map(|r| r.modules.len()).collect();
        assert_eq!(sizes, [2, 2]);
        assert_eq!(equal[0].budget_s, 30.0);
    }
}
