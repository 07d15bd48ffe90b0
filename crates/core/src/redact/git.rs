//! Credentials a git checkout left in the repository's configuration, found so they can be
//! redacted.

use std::path::Path;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;

/// Credentials a git checkout left in the repository's configuration: the token of an
/// `http.*.extraheader` authorization header (what `actions/checkout` writes unless
/// `persist-credentials: false`), and passwords in remote URLs. Returned as (name, value)
/// pairs to redact; a warning is logged when there are any.
pub fn git_credentials(repo_root: &Path) -> Vec<(String, String)> {
    let dotgit = repo_root.join(".git");
    let config = if dotgit.is_file() {
        std::fs::read_to_string(&dotgit)
            .ok()
            .and_then(|t| t.strip_prefix("gitdir:").map(|p| repo_root.join(p.trim())))
            .map(|d| {
                let common = std::fs::read_to_string(d.join("commondir"))
                    .map(|c| d.join(c.trim()))
                    .unwrap_or(d);
                common.join("config")
            })
    } else {
        Some(dotgit.join("config"))
    };
    let Some(text) = config.and_then(|c| std::fs::read_to_string(c).ok()) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for line in text.lines() {
        let l = line.trim();
        let lower = l.to_ascii_lowercase();
        if lower.starts_with("extraheader") {
            let value = l.split_once('=').map(|(_, v)| v.trim()).unwrap_or_default();
            let value = value.trim_matches('"');
            let mut words = value.split_whitespace().rev();
            if let Some(cred) = words.next() {
                out.push(("GIT_EXTRAHEADER".to_string(), cred.to_string()));
                if let Ok(decoded) = STANDARD.decode(cred)
                    && let Ok(text) = String::from_utf8(decoded)
                    && let Some((_, token)) = text.split_once(':')
                {
                    out.push(("GIT_EXTRAHEADER".to_string(), token.to_string()));
                }
            }
        } else if lower.starts_with("url")
            && let Some((_, url)) = l.split_once('=')
            && let Some((scheme_user, rest)) = url.trim().split_once('@')
            && let Some((_, pass)) = scheme_user.rsplit_once(':')
            && !pass.starts_with("//")
            && !rest.is_empty()
        {
            out.push(("GIT_REMOTE_PASSWORD".to_string(), pass.to_string()));
        }
    }
    if !out.is_empty() {
        tracing::warn!(
            "{} holds a credential (an extraheader or a password in a remote URL) that any command in the workdir can read; runner redacts it from everything it writes and sends. In GitHub Actions, check out with `persist-credentials: false`.",
            repo_root.join(".git/config").display()
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use base64::Engine;
    use base64::engine::general_purpose::STANDARD;

    use super::git_credentials;
    use crate::redact::Redactor;

    #[test]
    fn checkout_credentials_are_found_and_redacted() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join(".git")).unwrap();
        let header = STANDARD.encode("x-access-token:ghs_abcdefghijklmnop");
        std::fs::write(
            d.path().join(".git/config"),
            format!("[http \"https://github.com/\"]\n\textraheader = AUTHORIZATION: basic {header}\n[remote \"o\"]\n\turl = https://me:hunter2pass@example.com/x.git\n"),
        )
        .unwrap();
        let creds = git_credentials(d.path());
        let values: Vec<&str> = creds.iter().map(|(_, v)| v.as_str()).collect();
        assert!(values.contains(&"ghs_abcdefghijklmnop"), "{values:?}");
        assert!(values.contains(&header.as_str()), "{values:?}");
        assert!(values.contains(&"hunter2pass"), "{values:?}");
        let red = Redactor::new(creds);
        let config = std::fs::read_to_string(d.path().join(".git/config")).unwrap();
        let out = red.redact(&config);
        assert!(
            !out.contains("ghs_") && !out.contains(&header) && !out.contains("hunter2"),
            "{out}"
        );
    }
}
