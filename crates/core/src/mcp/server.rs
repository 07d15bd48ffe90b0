//! One MCP server: started through [`crate::process::spawn`] (its own process group, inside
//! the task's sandbox), spoken to with the official SDK's client over its stdin and stdout,
//! and stopped with its whole group.

use std::collections::VecDeque;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult, ClientConfig, Implementation};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::{ClientHandler, RoleClient};
use serde_json::Value;
use tokio::io::AsyncBufReadExt;
use tokio_util::sync::CancellationToken;

use crate::permissions::Scope;
use crate::process::{self, ChildPolicy, KILL_GRACE, Program, Spawn};
use crate::spec::McpServerSpec;
use crate::tools::ToolOutput;

/// Lines of a server's stderr kept for error messages.
const STDERR_TAIL_LINES: usize = 10;
/// Longest stderr line kept.
const STDERR_LINE_CHARS: usize = 400;

/// The SDK's callbacks: a `tools/list_changed` notification marks the server's tools stale;
/// they are listed again between turns.
struct Handler {
    changed: Arc<AtomicBool>,
    name: String,
}

impl ClientHandler for Handler {
    fn on_tool_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        tracing::info!(server = %self.name, "MCP server says its tools changed");
        self.changed.store(true, Ordering::SeqCst);
        std::future::ready(())
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            Default::default(),
            Implementation::new("runner", crate::VERSION),
        )
    }
}

/// The last lines a server wrote on stderr.
#[derive(Default)]
struct StderrTail(VecDeque<String>);

impl StderrTail {
    fn push(&mut self, line: &str) {
        if self.0.len() == STDERR_TAIL_LINES {
            self.0.pop_front();
        }
        self.0
            .push_back(line.chars().take(STDERR_LINE_CHARS).collect());
    }

    /// `; stderr: …` with the kept lines, or nothing.
    fn suffix(&self) -> String {
        if self.0.is_empty() {
            String::new()
        } else {
            let lines: Vec<&str> = self.0.iter().map(String::as_str).collect();
            format!("; its stderr ended with: {}", lines.join(" | "))
        }
    }
}

/// A running MCP server.
pub(crate) struct Server {
    /// The spec's name for it.
    pub name: String,
    tool_timeout: Duration,
    service: tokio::sync::Mutex<Option<RunningService<RoleClient, Handler>>>,
    peer: rmcp::Peer<RoleClient>,
    child: tokio::sync::Mutex<Option<process::Child>>,
    changed: Arc<AtomicBool>,
    stderr: Arc<Mutex<StderrTail>>,
}

/// Why a server did not start.
#[derive(Debug, thiserror::Error)]
#[error("MCP server `{name}` did not start: {reason}")]
pub(crate) struct StartError {
    /// The server's name.
    pub name: String,
    /// What went wrong.
    pub reason: String,
}

impl Server {
    /// Start server `name` in `cwd` under `policy` (confined like a command allowed to
    /// write), complete the MCP handshake and list its tools, all within the spec's startup
    /// timeout; `cancel` gives up early.
    pub(crate) async fn start(
        name: &str,
        spec: &McpServerSpec,
        cwd: &Path,
        policy: &ChildPolicy,
        cancel: &CancellationToken,
    ) -> Result<(Server, Vec<rmcp::model::Tool>), StartError> {
        let fail = |reason: String| StartError {
            name: name.to_string(),
            reason,
        };
        let env = super::env::expand(name, spec, |k| std::env::var(k).ok()).map_err(fail)?;
        let mut child = process::spawn(&Spawn {
            program: Program::Exec {
                program: &spec.command,
                args: &spec.args,
            },
            cwd,
            env: policy,
            inherit_env: false,
            extra_env: &env,
            stdin: true,
            scope: Scope::Write,
            report_fd: None,
        })
        .map_err(|e| fail(format!("cannot run `{}`: {e}", spec.command)))?;
        let stderr = Arc::new(Mutex::new(StderrTail::default()));
        if let Some(err) = child.inner.stderr.take() {
            tokio::spawn(drain_stderr(name.to_string(), err, stderr.clone()));
        }
        let (Some(stdout), Some(stdin)) = (child.inner.stdout.take(), child.inner.stdin.take())
        else {
            child.stop_group(KILL_GRACE).await;
            return Err(fail("its stdin or stdout is not a pipe".into()));
        };
        let changed = Arc::new(AtomicBool::new(false));
        let handler = Handler {
            changed: changed.clone(),
            name: name.to_string(),
        };
        let timeout = spec.startup_timeout();
        let connect = async {
            let service = rmcp::serve_client(handler, (stdout, stdin))
                .await
                .map_err(|e| format!("the MCP handshake failed: {e}"))?;
            let tools = service
                .peer()
                .list_all_tools()
                .await
                .map_err(|e| format!("listing its tools failed: {e}"))?;
            Ok::<_, String>((service, tools))
        };
        let connected = tokio::select! {
            r = tokio::time::timeout(timeout, connect) => match r {
                Ok(r) => r,
                Err(_) => Err(format!(
                    "it did not answer the MCP handshake and list its tools within {}s (startup_timeout)",
                    timeout.as_secs_f64()
                )),
            },
            _ = cancel.cancelled() => Err("the run was stopped while it started".into()),
        };
        match connected {
            Ok((service, tools)) => {
                let peer = service.peer().clone();
                Ok((
                    Server {
                        name: name.to_string(),
                        tool_timeout: spec.tool_timeout(),
                        service: tokio::sync::Mutex::new(Some(service)),
                        peer,
                        child: tokio::sync::Mutex::new(Some(child)),
                        changed,
                        stderr,
                    },
                    tools,
                ))
            }
            Err(reason) => {
                let exited = child.inner.try_wait().ok().flatten();
                child.stop_group(KILL_GRACE).await;
                // Let the stderr reader take the last lines.
                tokio::time::sleep(Duration::from_millis(50)).await;
                let status = exited.map_or_else(String::new, |s| format!(" (it exited: {s})"));
                let tail = stderr.lock().map(|t| t.suffix()).unwrap_or_default();
                Err(fail(format!("{reason}{status}{tail}")))
            }
        }
    }

    /// Whether the server said its tools changed since the last [`Server::take_changed`].
    pub(crate) fn take_changed(&self) -> bool {
        self.changed.swap(false, Ordering::SeqCst)
    }

    /// Whether a `tools/list_changed` is pending.
    pub(crate) fn changed(&self) -> bool {
        self.changed.load(Ordering::SeqCst)
    }

    /// List the server's tools again.
    pub(crate) async fn list_tools(&self) -> Result<Vec<rmcp::model::Tool>, String> {
        self.peer
            .list_all_tools()
            .await
            .map_err(|e| format!("MCP server `{}`: listing its tools failed: {e}", self.name))
    }

    /// Call `tool` with `arguments`: the server's answer as a tool result, or a tool error
    /// when the server fails, times out (`tool_timeout`) or is gone; `cancel` stops waiting.
    pub(crate) async fn call(
        &self,
        tool: &str,
        arguments: serde_json::Map<String, Value>,
        cancel: &CancellationToken,
    ) -> ToolOutput {
        if self.peer.is_transport_closed() {
            return ToolOutput::error(self.gone().await);
        }
        let params = CallToolRequestParams::new(tool.to_string()).with_arguments(arguments);
        let call = tokio::time::timeout(self.tool_timeout, self.peer.call_tool(params));
        let answer = tokio::select! {
            r = call => r,
            _ = cancel.cancelled() => {
                return ToolOutput::error("Not finished: the run was interrupted while the MCP server worked on this call.");
            }
        };
        match answer {
            Ok(Ok(result)) => render(result),
            Ok(Err(e)) if self.peer.is_transport_closed() || self.exited().await => {
                tracing::warn!(server = %self.name, tool, "MCP call failed: {e}");
                ToolOutput::error(self.gone().await)
            }
            Ok(Err(e)) => ToolOutput::error(format!(
                "MCP server `{}` failed the call to {tool}: {e}",
                self.name
            )),
            Err(_) => ToolOutput::error(format!(
                "MCP server `{}` did not answer the call to {tool} within {}s (tool_timeout); the call was abandoned",
                self.name,
                self.tool_timeout.as_secs_f64()
            )),
        }
    }

    /// Whether the server process has exited.
    async fn exited(&self) -> bool {
        let mut child = self.child.lock().await;
        match child.as_mut() {
            Some(c) => c.inner.try_wait().ok().flatten().is_some(),
            None => true,
        }
    }

    /// The error for a call to a server that is gone.
    async fn gone(&self) -> String {
        let status = {
            let mut child = self.child.lock().await;
            child
                .as_mut()
                .and_then(|c| c.inner.try_wait().ok().flatten())
                .map_or_else(String::new, |s| format!(" ({s})"))
        };
        let tail = self.stderr.lock().map(|t| t.suffix()).unwrap_or_default();
        format!(
            "MCP server `{}` is not running{status}: its tools cannot be called for the rest of this task{tail}",
            self.name
        )
    }

    /// End the connection and stop the server's process group (SIGTERM, then SIGKILL after
    /// the grace period). Idempotent.
    pub(crate) async fn stop(&self) {
        if let Some(service) = self.service.lock().await.take() {
            // Closing the client closes the server's stdin: a well-behaved server exits.
            let _ = tokio::time::timeout(Duration::from_secs(1), service.cancel()).await;
        }
        if let Some(mut child) = self.child.lock().await.take() {
            child.stop_group(KILL_GRACE).await;
            let _ = child.inner.wait().await;
            tracing::debug!(server = %self.name, "MCP server stopped");
        }
    }
}

/// Forward the server's stderr to the log (debug) and keep its last lines.
async fn drain_stderr(
    name: String,
    err: tokio::process::ChildStderr,
    tail: Arc<Mutex<StderrTail>>,
) {
    let mut lines = tokio::io::BufReader::new(err).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        tracing::debug!(server = %name, "mcp stderr: {line}");
        if let Ok(mut t) = tail.lock() {
            t.push(&line);
        }
    }
}

/// A `tools/call` result as a tool result for the model: its text (and what stands for its
/// other content), `is_error` as the server says, and the content (and structured content)
/// as the structured result.
fn render(result: CallToolResult) -> ToolOutput {
    use rmcp::model::ContentBlock as C;
    let mut parts: Vec<String> = Vec::new();
    for block in &result.content {
        match block {
            C::Text(t) => parts.push(t.text.clone()),
            C::Image(i) => parts.push(format!(
                "[image {} ({} base64 characters), not shown]",
                i.mime_type,
                i.data.len()
            )),
            C::Audio(a) => parts.push(format!(
                "[audio {} ({} base64 characters), not shown]",
                a.mime_type,
                a.data.len()
            )),
            C::Resource(r) => parts.push(resource_text(&r.resource)),
            C::ResourceLink(l) => parts.push(format!("[resource {}]", l.uri)),
            other => parts.push(serde_json::to_string(other).unwrap_or_default()),
        }
    }
    if parts.is_empty()
        && let Some(s) = &result.structured_content
    {
        parts.push(s.to_string());
    }
    let mut structured = serde_json::json!({
        "content": serde_json::to_value(&result.content).unwrap_or(Value::Null),
    });
    if let Some(s) = &result.structured_content {
        structured["structuredContent"] = s.clone();
    }
    ToolOutput {
        content: parts.join("\n"),
        is_error: result.is_error.unwrap_or(false),
        structured: Some(structured),
        command: None,
    }
}

/// The text of an embedded resource, or its uri.
fn resource_text(r: &rmcp::model::ResourceContents) -> String {
    match r {
        rmcp::model::ResourceContents::TextResourceContents { text, .. } => text.clone(),
        rmcp::model::ResourceContents::BlobResourceContents { uri, .. } => {
            format!("[resource {uri} (binary), not shown]")
        }
        #[allow(unreachable_patterns)]
        other => serde_json::to_string(other).unwrap_or_default(),
    }
}
