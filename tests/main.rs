//! All integration tests, compiled as one binary (linking many costs minutes on 2 cores).

mod common;

mod agent_families;
mod agents;
mod apply_fixes;
mod architecture;
mod builtin_roles;
mod cluster;
mod completion;
mod doctor;
mod dynamic;
mod errors;
mod executor;
mod first_hour;
mod fix_cycle;
mod fuzz;
mod generator;
mod generator_reach;
mod hostile;
mod html_report;
mod js_generator;
mod live_view;
mod mutation;
mod pipelines;
mod python_contracts;
mod real_projects;
mod report;
mod resume;
mod safety;
mod sandbox;
mod scenarios;
mod strategist;
mod torture;
mod verdicts;
mod views;
mod watch;
