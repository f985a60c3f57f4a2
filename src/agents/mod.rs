//! Agent backends: how a role's work gets done. `command` runs any program as the role; the
//! built-in roles run in-process (src/team).

pub mod answer;
pub mod backends;
pub mod command;
pub mod http;
