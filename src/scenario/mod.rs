//! Scenario planning: a plan of scenarios before any test is written, after the seed's
//! `scenarios.csv`. Each scenario is a row naming its layer, priority, target and test files, the
//! cases it must cover and what it is for (`req_ref`), so every test traces back to a
//! requirement, a coverage gap or a module boundary.
//!
//! - `req`: `REQ-*.md` requirement files and their acceptance criteria (the spec route's input);
//! - `plan`: the rows, `scenarios.csv` (written atomically, read tolerantly) and its validation;
//! - `route`: which route feeds the plan (resume, rerun, spec, gap, code) and why;
//! - `build`: scenarios from each route's input, numbered `AT-001`..;
//! - `board`: `discoveries.ndjson`, the board of patterns, fixtures and conventions roles share;
//! - `gate`: what the plan gate, the strategy and `status` show of a plan.
//!
//! Pure library code: it reads and writes the files it is given and imports nothing above
//! `util`.

pub mod board;
pub mod build;
pub mod gate;
pub mod plan;
pub mod req;
pub mod route;

pub use plan::{Priority, Scenario};
