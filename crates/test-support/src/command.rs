//! A clean command line for the `runner` binary: nothing of the host's model, cloud or proxy
//! configuration reaches it, and it is pointed at a closed local port until a test points it at
//! a mock server ([`crate::ModelServer`]).

use std::ffi::OsStr;
use std::process::{Command, Stdio};

/// Dummy API key [`runner_command`] puts in `ANTHROPIC_API_KEY`.
pub const DUMMY_API_KEY: &str = "sk-ant-test-dummy";

/// `RUNNER_STREAM_IDLE_TIMEOUT_MS` [`runner_command`] sets (small, so stall tests are quick; long
/// enough not to fire on a loaded 2-core machine). Override with `.env(...)`.
pub const TEST_STREAM_IDLE_TIMEOUT_MS: &str = "3000";

/// Environment variable prefixes removed from the child's environment.
/// (`AWS_*`, `GOOGLE_*` and the like: no test may reach a real cloud account's credentials.)
const SCRUBBED_PREFIXES: &[&str] = &[
    "ANTHROPIC_",
    "RUNNER_",
    "OPENAI_",
    "CLAUDE_",
    "AWS_",
    "GOOGLE_",
    "GCLOUD_",
    "CLOUDSDK_",
    "OTEL_",
];

/// Individual variables removed from the child's environment.
const SCRUBBED_VARS: &[&str] = &[
    "CLOUD_ML_REGION",
    "GCE_METADATA_HOST",
    "RUST_LOG",
    "RUST_BACKTRACE",
    "JOB_COMPLETION_INDEX",
    "TRACEPARENT",
    "TRACESTATE",
    "http_proxy",
    "HTTP_PROXY",
    "https_proxy",
    "HTTPS_PROXY",
    "all_proxy",
    "ALL_PROXY",
];

/// `binary` (a build of `runner`) as a `std::process::Command` with a clean environment: every
/// `ANTHROPIC_*`, `RUNNER_*`, `OPENAI_*`, `CLAUDE_*` variable, `RUST_LOG` and proxy variables
/// removed; `ANTHROPIC_API_KEY` set to [`DUMMY_API_KEY`]; `ANTHROPIC_BASE_URL` set to a closed
/// local port (so nothing can reach the network by accident);
/// `RUNNER_STREAM_IDLE_TIMEOUT_MS` = [`TEST_STREAM_IDLE_TIMEOUT_MS`]; `NO_COLOR=1`;
/// `NO_PROXY=127.0.0.1,localhost`; stdin null.
pub fn runner_command(binary: impl AsRef<OsStr>) -> Command {
    let mut cmd = Command::new(binary);
    for (k, _) in std::env::vars_os() {
        let Some(k) = k.to_str() else { continue };
        if SCRUBBED_PREFIXES.iter().any(|p| k.starts_with(p)) || SCRUBBED_VARS.contains(&k) {
            cmd.env_remove(k);
        }
    }
    for k in SCRUBBED_VARS {
        cmd.env_remove(k);
    }
    cmd.env("ANTHROPIC_API_KEY", DUMMY_API_KEY)
        // Port 9 (discard) on loopback: refused, never the real API.
        .env("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
        .env("RUNNER_STREAM_IDLE_TIMEOUT_MS", TEST_STREAM_IDLE_TIMEOUT_MS)
        .env("NO_COLOR", "1")
        .env("NO_PROXY", "127.0.0.1,localhost")
        .env("no_proxy", "127.0.0.1,localhost")
        .stdin(Stdio::null());
    // A Landlock ABI cap set for the whole test run (`.ci/run` runs the sandbox tests again as
    // on GitHub's hosted runners, ABI 4) reaches the binary too.
    if let Some(abi) = std::env::var_os("RUNNER_TEST_LANDLOCK_ABI") {
        cmd.env("RUNNER_TEST_LANDLOCK_ABI", abi);
    }
    cmd
}
