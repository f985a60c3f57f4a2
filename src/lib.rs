//! team-testing: a team of testing agents (strategist, generator, executor, analyst) run as actix
//! actors against a real repository, coordinated by a beat-model coordinator.

pub mod actors;
pub mod agents;
pub mod app;
pub mod artifacts;
pub mod bus;
pub mod cli;
pub mod error;
pub mod failpoint;
pub mod family;
pub mod gen;
pub mod git;
pub mod hint;
pub mod pipeline;
pub mod proc;
pub mod remote;
pub mod report;
pub mod roles;
pub mod sandbox;
pub mod scenario;
pub mod sched;
pub mod session;
pub mod tasks;
pub mod team;
pub mod testing;
pub mod util;
pub mod workspace;
