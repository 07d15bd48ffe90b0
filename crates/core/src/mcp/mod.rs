//! MCP servers of a task (the spec's `mcp_servers:`): started over stdio when the session is
//! built, their tools offered as `mcp__<server>__<tool>`, listed again between turns when a
//! server says they changed, and stopped when the session ends.
//!
//! - `server`: one server — started through [`crate::process`] inside the task's sandbox
//!   (confined like a command allowed to write; its network is the task's
//!   `sandbox.network`), spoken to with the official SDK (`rmcp`), stopped with its process
//!   group.
//! - `tool`: a server's tool as a [`DynTool`] whose calls declare
//!   [`Access::Other`](crate::tools::Access::Other): rules naming the tool decide them.
//! - `env`: the environment a server gets (only what its spec names, with Python's safe
//!   path; see [`crate::hooks::isolation`]). A server runs in an empty directory outside the
//!   workdir unless its `cwd` names one, so it loads no code the pull request put there.
//!
//! A server that fails to start is reported (log, the init record's `mcpServers`) and its tools
//! are not offered, unless it is `required`: then the task fails. A server that dies later
//! turns its calls into tool errors; the run goes on. Servers are never read from the workdir
//! (`.mcp.json`): a pull request cannot add one.

mod env;
mod server;
mod tool;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::events::McpServerStatus;
use crate::permissions::rule::tool_name_matches;
use crate::process::ChildPolicy;
use crate::spec::McpServerSpec;
use crate::tools::{DynTool, Registry};
use server::Server;
use tool::{McpTool, tool_name};

/// The MCP servers of one task.
#[derive(Default)]
pub(crate) struct McpServers {
    servers: Vec<Arc<Server>>,
    statuses: Vec<McpServerStatus>,
    /// Bare deny rules' tool names: the tools they name are not offered.
    removed: Vec<String>,
    /// The empty directory outside the workdir servers run in unless their `cwd` names one.
    _start_dir: Option<tempfile::TempDir>,
}

/// Why the task's MCP servers cannot serve it: the task does not start.
#[derive(Debug, thiserror::Error)]
pub(crate) enum McpStartError {
    /// The empty directory servers start in by default could not be made.
    #[error("cannot make the MCP servers' empty directory: {0}")]
    EmptyDir(std::io::Error),
    /// A `required` server did not start (each failure, joined).
    #[error("{0} (the server is `required`)")]
    Required(String),
}

/// What starting a task's servers gave: the servers and the tools they offer.
pub(crate) type Started = (McpServers, Vec<Arc<dyn DynTool>>);

impl McpServers {
    /// Start every server of `specs` for `workdir` under `policy`, at the same time, each in an
    /// empty directory outside the workdir unless its `cwd` names one. A server that
    /// does not start is reported and left out; `Err` when a `required` one did not start
    /// (the others are stopped again). Tools a bare deny rule in `removed` names are not
    /// offered.
    pub(crate) async fn start(
        specs: &BTreeMap<String, McpServerSpec>,
        workdir: &Path,
        policy: &ChildPolicy,
        removed: Vec<String>,
        cancel: &CancellationToken,
    ) -> Result<Started, McpStartError> {
        let mut all = McpServers {
            removed,
            ..McpServers::default()
        };
        if specs.is_empty() {
            return Ok((all, Vec::new()));
        }
        let start_dir = crate::hooks::isolation::empty_dir().map_err(McpStartError::EmptyDir)?;
        let default_cwd = start_dir.path().to_path_buf();
        all._start_dir = Some(start_dir);
        let starts = specs.iter().map(|(name, spec)| {
            let cwd = crate::hooks::isolation::spec_cwd(spec.cwd.as_deref(), workdir)
                .unwrap_or_else(|| default_cwd.clone());
            async move { Server::start(name, spec, &cwd, policy, cancel).await }
        });
        let results = futures_util::future::join_all(starts).await;
        let mut tools = Vec::new();
        let mut required_failed = Vec::new();
        for ((name, spec), result) in specs.iter().zip(results) {
            match result {
                Ok((server, listed)) => {
                    let server = Arc::new(server);
                    let offered = all.tools_of(&server, &listed);
                    tracing::info!(server = %name, tools = offered.len(), "MCP server started");
                    all.statuses.push(McpServerStatus {
                        name: name.clone(),
                        status: McpServerStatus::CONNECTED.into(),
                        error: None,
                        tools: offered.iter().map(|t| t.name().to_string()).collect(),
                    });
                    tools.extend(offered);
                    all.servers.push(server);
                }
                Err(e) => {
                    tracing::warn!(server = %name, required = spec.required, "{e}");
                    if spec.required {
                        required_failed.push(e.to_string());
                    }
                    all.statuses.push(McpServerStatus {
                        name: name.clone(),
                        status: McpServerStatus::FAILED.into(),
                        error: Some(e.reason),
                        tools: Vec::new(),
                    });
                }
            }
        }
        if !required_failed.is_empty() {
            all.stop().await;
            return Err(McpStartError::Required(required_failed.join("; ")));
        }
        Ok((all, tools))
    }

    /// How each server started, in name order.
    pub(crate) fn statuses(&self) -> &[McpServerStatus] {
        &self.statuses
    }

    /// Whether a server said its tools changed since they were last listed.
    pub(crate) fn changed(&self) -> bool {
        self.servers.iter().any(|s| s.changed())
    }

    /// List the tools of every server that said they changed, and offer those in `registry`
    /// instead of its old ones (the registry's schemas are built again for the next request).
    /// A listing that fails keeps the old tools. Returns the servers listed again.
    pub(crate) async fn refresh(&self, registry: &mut Registry) -> Vec<String> {
        let mut refreshed = Vec::new();
        for server in self.servers.iter().filter(|s| s.take_changed()) {
            match server.list_tools().await {
                Ok(listed) => {
                    let prefix = format!("mcp__{}__", server.name);
                    registry.retain(|name| !name.starts_with(&prefix));
                    let offered = self.tools_of(server, &listed);
                    tracing::info!(server = %server.name, tools = offered.len(), "MCP tools listed again");
                    for t in offered {
                        registry.add(t);
                    }
                    refreshed.push(server.name.clone());
                }
                Err(e) => tracing::warn!("{e}; keeping the tools listed before"),
            }
        }
        refreshed
    }

    /// The tools of `server` to offer from its listing: named `mcp__<server>__<tool>`, those
    /// a bare deny rule names left out, as are names too long or taken twice.
    fn tools_of(
        &self,
        server: &Arc<Server>,
        listed: &[rmcp::model::Tool],
    ) -> Vec<Arc<dyn DynTool>> {
        let mut out: Vec<Arc<dyn DynTool>> = Vec::new();
        for t in listed {
            let Some(name) = tool_name(&server.name, &t.name) else {
                tracing::warn!(server = %server.name, tool = %t.name, "MCP tool not offered: its name does not fit in a 64-character tool name");
                continue;
            };
            if self.removed.iter().any(|r| tool_name_matches(r, &name)) {
                tracing::debug!(tool = %name, "MCP tool not offered: a deny rule removes it");
                continue;
            }
            if out.iter().any(|o| o.name() == name) {
                tracing::warn!(server = %server.name, tool = %t.name, "MCP tool not offered: another of its tools has the same name {name}");
                continue;
            }
            out.push(Arc::new(McpTool::new(name, t, server.clone())));
        }
        out
    }

    /// Stop every server (each with its process group). Idempotent.
    pub(crate) async fn stop(&self) {
        futures_util::future::join_all(self.servers.iter().map(|s| s.stop())).await;
    }
}
