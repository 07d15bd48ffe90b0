//! The hosts a task's commands may reach through the egress proxy: exact names, or a leading
//! `*.` wildcard that matches any name below the domain (not the domain itself).

/// A malformed entry of `sandbox.network` (each variant holds the entry as written).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HostError {
    /// Empty, or a bare `*.`.
    #[error("`{0}` names no host")]
    NoHost(String),
    /// A URL rather than a name.
    #[error(
        "`{0}` is not a host name; give the name alone (e.g. `crates.io`), without a scheme or path"
    )]
    SchemeOrPath(String),
    /// A `host:port`.
    #[error(
        "`{0}` has a port; give the host name alone (every port of an allowed host can be reached)"
    )]
    Port(String),
    /// A `*` anywhere but a leading `*.`.
    #[error("`{0}` has a wildcard that is not a leading `*.` (e.g. `*.npmjs.org`)")]
    Wildcard(String),
    /// Characters or labels a host name cannot have.
    #[error("`{0}` is not a host name (letters, digits, `-` and dots between non-empty labels)")]
    NotAName(String),
}

/// One allowed host pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPattern {
    /// The name, lowercased, without the `*.` of a wildcard.
    name: String,
    wildcard: bool,
}

impl HostPattern {
    /// Parse a pattern of the spec's `sandbox.network` list; `Err` says what is wrong.
    pub fn parse(raw: &str) -> Result<HostPattern, HostError> {
        let t = raw.trim();
        let (wildcard, name) = match t.strip_prefix("*.") {
            Some(rest) => (true, rest),
            None => (false, t),
        };
        if name.is_empty() {
            return Err(HostError::NoHost(raw.to_string()));
        }
        if t.contains("://") || t.contains('/') {
            return Err(HostError::SchemeOrPath(raw.to_string()));
        }
        if t.contains(':') {
            return Err(HostError::Port(raw.to_string()));
        }
        if name.contains('*') {
            return Err(HostError::Wildcard(raw.to_string()));
        }
        let ok = name.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && label
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        });
        if !ok {
            return Err(HostError::NotAName(raw.to_string()));
        }
        Ok(HostPattern {
            name: name.to_ascii_lowercase(),
            wildcard,
        })
    }

    /// Whether `host` (a name or an IP literal from a request) matches.
    pub fn matches(&self, host: &str) -> bool {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        if self.wildcard {
            host.len() > self.name.len()
                && host.ends_with(&self.name)
                && host.as_bytes()[host.len() - self.name.len() - 1] == b'.'
        } else {
            host == self.name
        }
    }
}

/// Whether any of `patterns` matches `host`.
pub fn allowed(patterns: &[HostPattern], host: &str) -> bool {
    patterns.iter().any(|p| p.matches(host))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_and_wildcard_names() {
        let p = |s| HostPattern::parse(s).unwrap();
        assert!(p("crates.io").matches("crates.io"));
        assert!(p("crates.io").matches("CRATES.IO."));
        assert!(!p("crates.io").matches("static.crates.io"));
        assert!(!p("crates.io").matches("evilcrates.io"));
        let w = p("*.npmjs.org");
        assert!(w.matches("registry.npmjs.org"));
        assert!(w.matches("a.b.npmjs.org"));
        assert!(!w.matches("npmjs.org"));
        assert!(!w.matches("evilnpmjs.org"));
        assert!(!w.matches("npmjs.org.evil.com"));
    }

    #[test]
    fn malformed_patterns_say_why() {
        for (bad, why) in [
            ("https://crates.io", "scheme"),
            ("crates.io/x", "scheme"),
            ("crates.io:443", "port"),
            ("*", "leading"),
            ("a.*.org", "leading"),
            ("bad host", "not a host name"),
            ("a..b", "not a host name"),
            ("", "names no host"),
        ] {
            let e = HostPattern::parse(bad).unwrap_err();
            assert!(e.to_string().contains(why), "{bad}: {e}");
        }
    }
}
