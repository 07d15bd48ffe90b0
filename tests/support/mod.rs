//! Test support shared by the integration tests: a scripted mock Anthropic Messages server
//! ([`MockAnthropic`]), SSE builders ([`Resp`]), request invariant checks, and helpers to
//! drive the real `runner` binary in temporary git repositories.
//!
//! Use from an integration test file with `mod support;` and `use support::*;`.
//!
//! ```ignore
//! let mock = MockAnthropic::start(vec![
//!     Resp::new().tool_use("toolu_1", "Read", json!({"file_path": "a.txt"})).turn(),
//!     text_turn("done"),
//! ]);
//! let repo = TestRepo::new();
//! let spec = write_spec(repo.path(), "prompt: read a.txt\n");
//! runner_cmd_for(&mock).current_dir(repo.path()).arg("exec").arg(&spec).assert().success();
//! assert_eq!(mock.request(1).tool_result_text("toolu_1").as_deref(), Some("..."));
//! mock.assert_clean();
//! ```

#![allow(dead_code)]
#![allow(unused_imports)]

pub mod e2e;
pub mod harness;
pub mod invariants;
pub mod mock_anthropic;
pub mod mock_openai;
pub mod prompt_cache;
pub mod sse_builder;

pub use e2e::*;
pub use harness::*;
pub use invariants::{Violation, check_request};
pub use mock_anthropic::{
    CapturedRequest, DEFAULT_CHUNK_GAP, Gate, Hold, MockAnthropic, MockOptions, MockTurn,
};
pub use mock_openai::*;
pub use prompt_cache::*;
pub use sse_builder::*;
