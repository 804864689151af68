//! The integration tests, in one binary: one link instead of one per file. Each module is
//! one area; `support` holds the private tmux servers, the dashboard under test, sshd and
//! the fake agents they share.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stderr
)]

mod support;

mod architecture;
mod attention_tmux;
mod auto_tmux;
mod causes_tmux;
mod commands;
mod configs;
mod daemon_tmux;
mod e2e_auto;
mod e2e_demo;
mod e2e_faults;
mod e2e_grid;
mod e2e_hosts;
mod e2e_peek;
mod e2e_relaunch;
mod grid_tmux;
mod harness;
mod hear_tmux;
mod help;
mod lease_tmux;
mod load_tmux;
mod loop_paused;
mod lost_status_tmux;
mod occupant_tmux;
mod parser_fixtures;
mod relaunch_tmux;
mod resume_rules_tmux;
mod scale_tmux;
mod shell_tmux;
mod soak_tmux;
mod spend_tmux;
mod ssh_tmux;
mod stores_tmux;
mod transport_tmux;
mod tree_tmux;
mod two_instances_tmux;
mod webhook_tmux;
