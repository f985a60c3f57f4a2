//! The link as the executor's [`ShardRunner`]: a layer run split by test file goes out as one
//! envelope per shard on the executors' queue, and each shard's run comes back (the executor
//! merges them with `testing::merge` and judges the whole).

use super::Link;
use crate::team::{ProgressFn, ShardRequest, ShardRunner};
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
}
