//! Test support shared by the integration tests: the mock model servers ([`MockAnthropic`],
//! [`MockOpenai`], both a [`mock_server::MockServer`] playing a script of [`MockTurn`]s), SSE
//! builders ([`Resp`], [`OaResp`]), request invariant checks, and helpers that run the real
//! `runner` binary ([`Runner`], [`exec`]) in temporary git repositories ([`TestRepo`]).
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
pub mod fixtures;
pub mod harness;
pub mod invariants;
pub mod junit;
pub mod mcp;
pub mod mock_anthropic;
pub mod mock_bucket;
pub mod mock_cloud;
pub mod mock_openai;
pub mod mock_server;
pub mod mock_turn;
pub mod prompt_cache;
pub mod schemas;
pub mod sinks;
pub mod sse_builder;

pub use binary::*;
pub use e2e::*;
pub use fixtures::*;
pub use harness::*;
pub use invariants::check_request;
pub use junit::*;
pub use mcp::*;
pub use mock_anthropic::{MockAnthropic, MockOptions};
pub use mock_bucket::{BucketConfig, MockBucket};
pub use mock_cloud::{Cloud, CloudTurn, MockCloud};
pub use mock_openai::*;
pub use mock_server::{CapturedRequest, WORKDIR};
pub use mock_turn::{Gate, Hold, MockTurn};
pub use prompt_cache::*;
pub use schemas::*;
pub use sinks::*;
pub use sse_builder::*;
