//! The integration tests, as one test binary: the tests of each area are a module here,
//! and `support` (mock servers, SSE builders, helpers that drive the real binary) is compiled
//! once for all of them. A new test file is `tests/it/NAME.rs` with `use crate::support::*;`
//! and a `mod NAME;` line here; run one with `cargo test --test it NAME::`.

// Test and benchmark code may unwrap, panic and print (the library may not: Cargo.toml [lints]).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr,
    unreachable_pub
)]

mod support;

mod anthropic_http;
mod batch_cancel;
mod batch_scale;
mod cli_compat;
mod cloud_providers;
mod compat_artifacts;
mod context;
mod default_layout;
mod doc_commands;
mod event_schemas;
mod example_replay;
mod examples;
mod exec_basic;
mod exec_batch;
mod exec_cli;
mod exec_concurrent_bash;
mod exec_errors;
mod exec_git;
mod exec_github;
mod exec_inline;
mod exec_limits;
mod exec_multi;
mod exec_output_paths;
mod exec_outputs;
mod exec_permissions;
mod exec_signals;
mod exec_spec;
mod exec_streaming_tools;
mod exec_verify;
mod fallback;
mod footprint;
mod fuzz_parsers;
mod git_gc;
mod git_trust;
mod hook_trust;
mod hooks_e2e;
mod init;
mod install;
mod instructions;
mod integrity;
mod k8s_example;
mod mcp;
mod mock_selftest;
mod openai_exec;
mod openai_fixtures;
mod otel;
mod permissions_e2e;
mod policy_e2e;
mod prompt_caching;
mod provider_fixtures;
mod rate_limit;
mod redact_forms;
mod reliability;
mod replay_strict;
mod reports;
mod resume;
mod resume_git;
mod retry;
mod sandbox_e2e;
mod schema_sync;
mod spec_errors;
mod structured_output;
mod terminal;
mod timing;
mod tool_access;
mod zero_copy;
