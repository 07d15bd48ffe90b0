//! `--mcp-config FILE`: MCP servers in Claude Code's `.mcp.json` shape
//! (`{"mcpServers": {NAME: {command, args, env}}}`), read only when the flag names the file and
//! mapped onto a spec's `mcp_servers`.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use super::mcp::McpServerSpec;

/// Why an `--mcp-config` file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum McpConfigError {
    /// The file cannot be read.
    #[error("--mcp-config: cannot read {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// Not the `.mcp.json` shape.
    #[error(
        "--mcp-config: {path} is not an .mcp.json file ({{\"mcpServers\": {{NAME: {{\"command\", \"args\", \"env\"}}}}}}): {why}"
    )]
    Shape {
        /// The file.
        path: String,
        /// What the parser said.
        why: String,
    },
    /// A server runner cannot start.
    #[error("--mcp-config: server `{name}` in {path}: {why}")]
    Server {
        /// The file.
        path: String,
        /// The server.
        name: String,
        /// Why.
        why: String,
    },
}

/// The file: `mcpServers`, each server as written.
#[derive(Debug, Deserialize)]
struct McpJson {
    #[serde(rename = "mcpServers")]
    mcp_servers: BTreeMap<String, ServerJson>,
}

/// One server of `.mcp.json`: stdio (`command`) or remote (`type: http`/`sse`, `url`).
#[derive(Debug, Deserialize)]
struct ServerJson {
    #[serde(rename = "type")]
    kind: Option<String>,
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    url: Option<String>,
}

/// The servers of the `.mcp.json`-style file at `path`.
pub fn read(path: &Path) -> Result<BTreeMap<String, McpServerSpec>, McpConfigError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| McpConfigError::Read {
        path: shown.clone(),
        source,
    })?;
    parse(&text, &shown)
}

/// The servers of `.mcp.json` text (`shown` names the file in errors).
pub fn parse(text: &str, shown: &str) -> Result<BTreeMap<String, McpServerSpec>, McpConfigError> {
    let file: McpJson = serde_json::from_str(text).map_err(|e| McpConfigError::Shape {
        path: shown.to_string(),
        why: e.to_string(),
    })?;
    let mut out = BTreeMap::new();
    for (name, s) in file.mcp_servers {
        let server_error = |why: String| McpConfigError::Server {
            path: shown.to_string(),
            name: name.clone(),
            why,
        };
        if let Some(kind) = s.kind.as_deref().filter(|k| *k != "stdio") {
            return Err(server_error(format!(
                "type `{kind}`{} is not supported; runner starts MCP servers over stdio (`command`), inside the task's sandbox",
                s.url
                    .as_deref()
                    .map(|u| format!(" ({u})"))
                    .unwrap_or_default()
            )));
        }
        let Some(command) = s.command else {
            return Err(server_error("no `command`".to_string()));
        };
        out.insert(
            name,
            McpServerSpec {
                command,
                args: s.args,
                env: s.env,
                startup_timeout: None,
                tool_timeout: None,
                required: false,
                // Claude Code's format has no working directory: the default one (an empty
                // directory outside the workdir) applies.
                cwd: None,
            },
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_stdio_servers_and_refuses_remote_ones() {
        let m = parse(
            r#"{"mcpServers": {"fs": {"command": "npx", "args": ["-y", "srv"], "env": {"K": "${K}"}}}}"#,
            "m.json",
        )
        .unwrap();
        assert_eq!(m["fs"].command, "npx");
        assert_eq!(m["fs"].args, vec!["-y", "srv"]);
        assert_eq!(m["fs"].env["K"], "${K}");
        let e = parse(
            r#"{"mcpServers": {"web": {"type": "http", "url": "https://x/mcp", "headers": {}}}}"#,
            "m.json",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("`web`") && e.contains("stdio"), "{e}");
        assert!(parse("{}", "m.json").is_err());
    }
}
