//! The link as the executor's [`ShardRunner`]: a layer run split by test file goes out as one
//! envelope per shard on the executors' queue, and each shard's run comes back (the executor
//! merges them with `testing::merge` and judges the whole).

use std::time::Duration;

use super::Link;
use crate::tasks::Task;
use crate::team::ShardRunner;
use crate::testing::runner::RunOutput;

impl ShardRunner for Link {
    fn count(&self) -> usize {
        self.shards()
    }

    fn run(
        &self,
        task: &Task,
        layer: &str,
        run_no: &str,
        deselect: &[String],
        groups: Vec<Vec<String>>,
        timeout: Duration,
    ) -> Result<Vec<RunOutput>, String> {
        if !self.serves(&task.owner) {
            return Err(format!("no live {} worker on {}", task.owner, self.url()));
        }
        self.run_shards(task, layer, run_no, deselect, groups, timeout)
            .map_err(|e| e.to_string())
    }
}
