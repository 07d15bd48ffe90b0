//! Hooks and verify checks that run a file inside the workdir: refused unless marked
//! `trusted: true`, never given secrets, their scripts protected (see
//! [`crate::hooks::trust`]). Hooks and MCP servers that run a launcher which finds its code
//! for itself (`python -c`, `npx`) get no secret unless it is pinned outside the workdir.

use std::path::PathBuf;

use crate::hooks::isolation;
use crate::hooks::trust::{Start, WorkdirCode, script_outside, workdir_code, workdir_script};
use crate::spec::{LoadedSpec, SpecError};

/// Check the spec's hooks (settings files' included) and verify checks; the scripts of the
/// trusted ones, relative to the workdir, for the policy to protect.
pub fn check(loaded: &LoadedSpec, secrets: &[String]) -> Result<Vec<PathBuf>, SpecError> {
    let workdir = &loaded.workdir;
    let mut protected = Vec::new();
    let mut keep = |script: PathBuf| {
        if let Ok(rel) = script.strip_prefix(workdir)
            && !protected.contains(&rel.to_path_buf())
        {
            protected.push(rel.to_path_buf());
        }
    };
    let path = std::env::var("PATH").ok();
    for (event, groups) in &loaded.spec.hooks {
        for (g, group) in groups.iter().enumerate() {
            for (k, h) in group.hooks.iter().enumerate() {
                let key = format!("hooks.{event}[{g}].hooks[{k}]");
                let cwd = isolation::spec_cwd(h.cwd.as_deref(), workdir);
                let start = Start {
                    command: &h.command,
                    args: h.args.as_deref(),
                    cwd: cwd.as_deref(),
                    env: &[],
                    path: path.as_deref(),
                };
                let Some(code) = workdir_code(&start, workdir) else {
                    continue;
                };
                let script = script_outside(&h.command, h.args.as_deref(), workdir);
                if let WorkdirCode::File(why) = &code
                    && !h.trusted
                {
                    let what = match &script {
                        Some(p) => format!(
                            "runs {}, a file inside the workdir that the agent (or the pull request under review) can change, so the hook would run their code with its privileges",
                            p.display()
                        ),
                        None => format!(
                            "{why}: code the agent (or the pull request under review) can change, which the hook would run with its privileges"
                        ),
                    };
                    return Err(SpecError::at(
                        loaded,
                        &key,
                        format!(
                            "the hook `{}` {what}. Run a script from outside the workdir, or mark the hook `trusted: true` if the file is meant to be the repository's own",
                            h.command
                        ),
                    ));
                }
                if !h.env_passthrough.is_empty() {
                    return Err(SpecError::at(
                        loaded,
                        &key,
                        format!(
                            "the hook `{}` {}, code inside the workdir or that the workdir can supply, and cannot receive secrets: remove its `env_passthrough` ({}), or pin what it runs outside the workdir",
                            h.command,
                            code.reason(),
                            h.env_passthrough.join(", ")
                        ),
                    ));
                }
                if let Some(script) = script {
                    keep(script);
                }
            }
        }
    }
    for (name, server) in &loaded.spec.mcp_servers {
        let secrets = server.referenced_vars();
        if secrets.is_empty() {
            continue;
        }
        let cwd = isolation::spec_cwd(server.cwd.as_deref(), workdir);
        let env: Vec<(String, String)> = server
            .env
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        // The server's PATH: its own `env`'s, or runner's (a minimal environment keeps it).
        let server_path = server.env.get("PATH").cloned().or_else(|| path.clone());
        let start = Start {
            command: &server.command,
            args: Some(&server.args),
            cwd: cwd.as_deref(),
            env: &env,
            path: server_path.as_deref(),
        };
        if let Some(code) = workdir_code(&start, workdir) {
            return Err(SpecError::at(
                loaded,
                &format!("mcp_servers.{name}"),
                format!(
                    "the MCP server `{name}` {}, code inside the workdir or that the workdir can supply, so the pull request under review could run code with the secrets its `env` passes ({}). Pin what it runs outside the workdir (an exact version such as `npx -y pkg@1.2.3`, or an absolute path outside the workdir), or give it no secret",
                    code.reason(),
                    secrets
                        .iter()
                        .map(|s| format!("${{{s}}}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
    }
    for (i, check) in loaded.spec.verify.iter().enumerate() {
        let Some(script) = workdir_script(&check.run, None, workdir) else {
            continue;
        };
        let key = format!("verify[{i}]");
        if !check.trusted {
            return Err(SpecError::at(
                loaded,
                &key,
                format!(
                    "the check `{}` runs {}, a file inside the workdir that the agent (or the pull request under review) can change. Run a script from outside the workdir, or mark the check `trusted: true` if the file is meant to be the repository's own",
                    check.run,
                    script.display()
                ),
            ));
        }
        if let Some((k, _)) = check
            .env
            .iter()
            .find(|(_, v)| secrets.iter().any(|s| v.contains(&format!("${{{s}}}"))))
        {
            return Err(SpecError::at(
                loaded,
                &format!("{key}.env.{k}"),
                format!(
                    "the check `{}` runs {}, a file inside the workdir, and cannot receive secrets: `{k}` passes one",
                    check.run,
                    script.display()
                ),
            ));
        }
        keep(script);
    }
    Ok(protected)
}
