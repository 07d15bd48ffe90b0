//! Test support shared by the integration tests: a scripted mock Anthropic Messages server
//! ([`MockAnthropic`]), SSE builders ([`Resp`]), request invariant checks, and helpers to
//! drive the real `runner` binary in temporary git repositories.
//!
//! Test modules use it with `use crate::support::*;`.
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

pub mod e2e;
pub mod harness;
pub mod invariants;
pub mod mock_anthropic;
pub mod mock_openai;
pub mod sinks;
pub mod sse_builder;

pub use e2e::*;
pub use harness::*;
pub use invariants::check_request;
pub use mock_anthropic::{CapturedRequest, Gate, Hold, MockAnthropic, MockOptions, MockTurn};
pub use mock_openai::*;
pub use sinks::*;
pub use sse_builder::*;
