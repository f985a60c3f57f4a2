//! Agent backends: how a role's work gets done. `command` runs any program as the role; the
//! built-in roles run in-process (src/team).

pub mod answer;
pub mod backends;
pub mod call;
pub mod cli;
pub mod command;
pub mod copy_answer;
pub mod http;
pub mod record;
