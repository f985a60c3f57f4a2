//! The link as the [`ShardRunner`] of the executor and the generator: a layer run split by test
//! file, or a search split by module, goes out as one envelope per shard on the role's queue,
//! and each shard's output comes back (the executor merges runs with `testing::merge` and judges
//! the whole; the generator merges searches with `GenResult::merge` and writes the files).

use super::Link;
use crate::gen::GenResult;
use crate::team::{GenShardRequest, ProgressFn, ShardError, ShardRequest, ShardRunner};
use crate::testing::runner::RunOutput;

impl ShardRunner for Link {
    fn count(&self) -> usize {
        self.shards()
    }

    fn run(
        &self,
        req: ShardRequest<'_>,
        progress: ProgressFn<'_>,
    ) -> Result<Vec<RunOutput>, ShardError> {
        if !self.serves(&req.task.owner) {
            return Err(ShardError::NoWorker {
                role: req.task.owner.clone(),
                url: self.url().to_string(),
            });
        }
        self.run_shards(req, progress)
            .map_err(|e| ShardError::Cluster(Box::new(e)))
    }

    fn generate(
        &self,
        req: GenShardRequest<'_>,
        progress: ProgressFn<'_>,
    ) -> Result<Vec<GenResult>, ShardError> {
        if !self.serves(&req.task.owner) {
            return Err(ShardError::NoWorker {
                role: req.task.owner.clone(),
                url: self.url().to_string(),
            });
        }
        self.generate_shards(req, progress)
            .map_err(|e| ShardError::Cluster(Box::new(e)))
    }
}
