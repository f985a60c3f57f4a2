//! Small helpers shared by the built-in roles: the task's time budget and JSON object conversion.

use std::time::{Duration, Instant};

use serde_json::{Map, Value};

/// What is left of the task's time budget; an error once the deadline has passed.
pub(crate) fn time_left(deadline: Instant) -> Result<Duration, String> {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        Err("the task's deadline has passed".into())
    } else {
        Ok(left)
    }
}

pub(crate) fn to_map(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}
