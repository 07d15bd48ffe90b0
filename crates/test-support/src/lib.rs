//! runner-test-support: what runner's unit tests, integration tests and benchmarks share.
//!
//! - Mock model servers on 127.0.0.1, each a [`ModelServer`] the `runner` binary can be
//!   pointed at: [`MockAnthropic`] (the Messages API) and [`MockOpenai`] (chat completions),
//!   both a [`mock_server::MockServer`] playing a script of [`MockTurn`]s built with the SSE
//!   builders ([`Resp`], [`OaResp`]) and checking every request ([`invariants`]);
//!   [`MockBucket`], a token-bucket rate limit; [`MockCloud`], Amazon Bedrock and Google
//!   Vertex AI with their credential endpoints.
//! - [`otlp::OtlpReceiver`], an OTLP/HTTP receiver for the OpenTelemetry export.
//! - [`script`], a small scripted run of runner-report events (built on runner-report's
//!   contract fixtures), and [`fixtures`], the recorded streams under `tests/fixtures/`.
//! - [`TestRepo`], a temporary git repository, with [`write_spec`] for task specs and
//!   [`json_lines`] to read what the binary wrote; [`runner_command`], a build of the binary
//!   with a clean environment (the caller says which build: `env!("CARGO_BIN_EXE_runner")`
//!   exists only in the `runner` package's tests and benchmarks).
//!
//! ```ignore
//! use runner_test_support::*;
//! let mock = MockAnthropic::start(vec![
//!     Resp::new().tool_use("toolu_1", "Read", json!({"file_path": "a.txt"})).turn(),
//!     text_turn("done"),
//! ]);
//! let repo = TestRepo::new();
//! let spec = write_spec(repo.path(), "prompt: read a.txt\n");
//! let out = runner_command(env!("CARGO_BIN_EXE_runner"))
//!     .envs(mock.runner_env())
//!     .args(["exec"])
//!     .arg(&spec)
//!     .current_dir(repo.path())
//!     .output()?;
//! assert_eq!(mock.request(1).tool_result_text("toolu_1").as_deref(), Some("..."));
//! mock.assert_clean();
//! ```
//!
//! Test code: a failed expectation panics (the test fails), so unwrapping and panicking are
//! allowed here, unlike in the library crates; so is a diagnostic on stderr (a fake cloud's
//! refusal, which the test's output then shows).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stderr
)]

pub mod command;
pub mod fixtures;
pub mod invariants;
pub mod mock_anthropic;
pub mod mock_bucket;
pub mod mock_cloud;
pub mod mock_openai;
pub mod mock_server;
pub mod mock_turn;
pub mod model_server;
pub mod otlp;
pub mod repo;
pub mod script;
pub mod sse;
pub mod sse_builder;

pub use command::{DUMMY_API_KEY, TEST_STREAM_IDLE_TIMEOUT_MS, runner_command};
pub use fixtures::*;
pub use invariants::check_request;
pub use mock_anthropic::{MockAnthropic, MockOptions};
pub use mock_bucket::{BucketConfig, MockBucket};
pub use mock_cloud::{Cloud, CloudTurn, MockCloud};
pub use mock_openai::*;
pub use mock_server::{CapturedRequest, WORKDIR};
pub use mock_turn::{Gate, Hold, MockTurn};
pub use model_server::ModelServer;
pub use repo::*;
pub use sse_builder::*;
