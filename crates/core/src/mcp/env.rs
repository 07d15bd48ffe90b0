//! The environment an MCP server gets: the variables its spec's `env` names, with `${VAR}`
//! replaced by runner's own values, and Python's safe path
//! ([`crate::hooks::isolation::SAFE_ENV`]). Nothing else of runner's environment reaches it but
//! [`crate::process::BASE_ENV`] (and the sandbox's TMPDIR and proxy variables).

use crate::spec::McpServerSpec;
use crate::spec::mcp::{Part, parse_template};

/// The `env` of server `name` with every `${VAR}` expanded through `lookup`; `Err` names the
/// first variable that is not set (or a malformed value).
pub(crate) fn expand(
    name: &str,
    spec: &McpServerSpec,
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::with_capacity(spec.env.len() + crate::hooks::isolation::SAFE_ENV.len());
    for (var, template) in &spec.env {
        let parts =
            parse_template(template).map_err(|e| format!("mcp_servers.{name}.env.{var}: {e}"))?;
        let mut value = String::new();
        for p in parts {
            match p {
                Part::Text(t) => value.push_str(&t),
                Part::Var(v) => match lookup(v) {
                    Some(x) => value.push_str(&x),
                    None => {
                        return Err(format!(
                            "mcp_servers.{name}.env.{var} takes ${{{v}}}, which is not set in runner's environment"
                        ));
                    }
                },
            }
        }
        out.push((var.clone(), value));
    }
    // Set last, so that nothing undoes them.
    out.extend(
        crate::hooks::isolation::SAFE_ENV
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string())),
    );
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(env: &[(&str, &str)]) -> McpServerSpec {
        McpServerSpec {
            command: "x".into(),
            args: vec![],
            env: env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            cwd: None,
            startup_timeout: None,
            tool_timeout: None,
            required: false,
        }
    }

    #[test]
    fn variables_are_expanded_and_missing_ones_named() {
        let lookup = |k: &str| (k == "GH_TOKEN").then(|| "t0k".to_string());
        let s = spec(&[("TOKEN", "${GH_TOKEN}"), ("MODE", "read-$$only")]);
        assert_eq!(
            expand("gh", &s, lookup).unwrap(),
            [
                ("MODE".to_string(), "read-$only".to_string()),
                ("TOKEN".to_string(), "t0k".to_string()),
                ("PYTHONSAFEPATH".to_string(), "1".to_string()),
                ("PYTHONDONTWRITEBYTECODE".to_string(), "1".to_string())
            ]
        );
        let e = expand("gh", &spec(&[("T", "${NOPE}")]), lookup).unwrap_err();
        assert!(
            e.contains("mcp_servers.gh.env.T") && e.contains("${NOPE}"),
            "{e}"
        );
    }
}
