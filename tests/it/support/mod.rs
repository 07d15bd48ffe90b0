//! Test support of the integration tests: runner-test-support (the mock model servers
//! [`MockAnthropic`] and [`MockOpenai`] playing scripts of [`MockTurn`]s, SSE builders
//! ([`Resp`], [`OaResp`]), request invariant checks, the OTLP receiver, temporary git
//! repositories ([`TestRepo`])), re-exported, plus what drives the real `runner` binary built
//! for these tests ([`Runner`], [`exec`]) and checks what it wrote (schemas, JUnit, sinks).
//!
//! Test modules use it with `use crate::support::*;`.
//!
//! ```ignore
//! let mock = MockAnthropic::start(vec![
//!     Resp::new().tool_use("toolu_1", "Read", json!({"file_path": "a.txt"})).turn(),
//!     text_turn("done"),
//! ]);
//! let repo = TestRepo::new();
//! let out = OutDir::new();
//! let spec = write_spec(repo.path(), "prompt: read a.txt\n");
//! exec(&mock, &repo, &out).arg(&spec).run().expect_code(0);
//! assert_eq!(mock.request(1).tool_result_text("toolu_1").as_deref(), Some("..."));
//! mock.assert_clean();
//! ```

pub mod binary;
pub mod doc_blocks;
pub mod e2e;
pub mod harness;
pub mod junit;
pub mod mcp;
pub mod prompt_cache;
pub mod schemas;
pub mod sinks;

pub use runner_test_support::*;

pub use binary::*;
pub use e2e::*;
pub use harness::*;
pub use junit::*;
pub use mcp::*;
pub use prompt_cache::*;
pub use schemas::*;
pub use sinks::*;
