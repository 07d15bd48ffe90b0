//! MCP servers for the tests: the small stdio server in `mcp_stub.sh` (the failure cases) and
//! the real filesystem server from npm (pinned, installed like `.ci/run` installs it).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The stub server script.
pub fn mcp_stub() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/support/mcp_stub.sh")
}

/// An `mcp_servers:` section with one stub server called `name`, started with `args`, and
/// `extra` YAML lines (indented four spaces) under it.
pub fn stub_servers(name: &str, args: &[&str], extra: &[&str]) -> String {
    let mut all = vec![mcp_stub().display().to_string()];
    all.extend(args.iter().map(|a| a.to_string()));
    let mut s = format!(
        "mcp_servers:\n  {name}:\n    command: bash\n    args: {}\n",
        serde_json::to_string(&all).unwrap()
    );
    for line in extra {
        s.push_str(&format!("    {line}\n"));
    }
    s
}

/// The pinned version of `@modelcontextprotocol/server-filesystem` (as in `.ci/run`).
pub const FILESYSTEM_SERVER_VERSION: &str = "2026.8.31";

/// Whether `program --version` runs.
fn runs(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The entry script of the filesystem server, installed with npm (pinned) into the cache
/// `.ci/run` fills, when it is not there yet. `None` when node is missing here (the caller
/// skips with a message; CI installs node); a failed install fails the test.
pub fn filesystem_server() -> Option<PathBuf> {
    static FOUND: OnceLock<Option<PathBuf>> = OnceLock::new();
    FOUND
        .get_or_init(|| {
            if !runs("node") || !runs("npm") {
                eprintln!(
                    "SKIPPED: node and npm are not installed here; the test with the real MCP filesystem server needs them (.ci/run installs them)"
                );
                return None;
            }
            let cache = std::env::var_os("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
                .expect("HOME or XDG_CACHE_HOME");
            let dir = cache.join(format!(
                "runner-ci/mcp-server-filesystem-{FILESYSTEM_SERVER_VERSION}"
            ));
            let entry = dir.join("node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
            if !entry.is_file() {
                std::fs::create_dir_all(&dir).unwrap();
                let package =
                    format!("@modelcontextprotocol/server-filesystem@{FILESYSTEM_SERVER_VERSION}");
                let out = Command::new("npm")
                    .args(["install", "--silent", "--no-audit", "--no-fund", "--prefix"])
                    .arg(&dir)
                    .arg(&package)
                    .output()
                    .expect("run npm");
                assert!(
                    out.status.success() && entry.is_file(),
                    "npm install {package} failed: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
            }
            Some(entry)
        })
        .clone()
}

/// Whether a process with this pid is running (not a zombie).
pub fn process_running(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z')),
        Err(_) => false,
    }
}
