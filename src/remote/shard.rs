//! The link as the [`ShardRunner`] of the executor and the generator: a layer run split by test
//! file, or a search split by module, goes out as one envelope per shard on the role's queue,
//! and each shard's output comes back (the executor merges runs with `testing::merge` and judges
//! the whole; the generator merges searches with `GenResult::merge` and writes the files).

use super::Link;
use crate::gen::GenResult;
use crate::team::{GenShardRequest, ProgressFn, ShardRequest, ShardRunner};
use crate::testing::runner::RunOutput;

impl ShardRunner for Link {
    fn count(&self) -> usize {
        self.shards()
    }

    fn run(
        &self,
        req: ShardRequest<'_>,
        progress: ProgressFn<'_>,
    ) -> Result<Vec<RunOutput>, String> {
        if !self.serves(&req.task.owner) {
            return Err(format!(
                "no live {} worker on {}",
                req.task.owner,
                self.url()
            ));
        }
        self.run_shards(req, progress).map_err(|e| e.to_string())
    }

    fn generate(
        &self,
        req: GenShardRequest<'_>,
        progress: ProgressFn<'_>,
    ) -> Result<Vec<GenResult>, String> {
        if !self.serves(&req.task.owner) {
            return Err(format!(
                "no live {} worker on {}",
                req.task.owner,
                self.url()
            ));
        }
        self.generate_shards(req, progress)
            .map_err(|e| e.to_string())
    }
}
