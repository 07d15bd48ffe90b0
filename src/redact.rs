//! Secret redaction for every output (`[REDACTED:NAME]`).
//!
//! A [`Redactor`] holds the values of the task's secrets (the spec's `secrets:`, the provider's
//! API-key variable, `GITHUB_TOKEN`, a credential `actions/checkout` left in `.git/config`) and
//! replaces each occurrence in text with `[REDACTED:NAME]`: the value itself, each line of a
//! multi-line value, and its common encodings — base64 (standard and URL-safe, at any offset
//! inside a longer encoded text such as a `basic` authorization header), hex, URL encoding.
//! Tool results are redacted before they go to the model; sinks (transcript, stream-json,
//! json) redact everything they write, spill files are redacted when written, and reports
//! rendered from a [`RunResult`](crate::events::RunResult) (text, JUnit) are given an already
//! redacted result ([`RunResult::redacted`](crate::events::RunResult::redacted)).

use std::borrow::Cow;
use std::path::Path;

use aho_corasick::{AhoCorasick, MatchKind};
use base64::Engine;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE};
use serde::Serialize;
use serde_json::Value;

/// Values shorter than this are never redacted: redacting `"1"` or `"ab"` would mangle
/// every output while protecting nothing.
pub const MIN_SECRET_LEN: usize = 4;

/// Derived forms (one line of a multi-line value, an encoding) shorter than this are not
/// redacted on their own: they would match unrelated text.
const MIN_DERIVED_LEN: usize = 8;

/// The forms a secret value may take in output: itself, each line of it, and its encodings.
fn forms(value: &str) -> Vec<String> {
    let mut out = vec![value.to_string()];
    let mut derived: Vec<String> = Vec::new();
    if value.contains('\n') {
        derived.extend(value.lines().map(|l| l.trim().to_string()));
    }
    let bytes = value.as_bytes();
    // Base64 at each of the three offsets a value can start at inside a longer encoded text:
    // the characters that depend on the value's bytes alone.
    for pad in 0..3usize {
        let mut buf = vec![0u8; pad];
        buf.extend_from_slice(bytes);
        let full = (buf.len() / 3) * 4;
        let skip = if pad == 0 { 0 } else { 4 };
        let std = STANDARD_NO_PAD.encode(&buf);
        if full > skip {
            let core = &std[skip..full.min(std.len())];
            derived.push(core.to_string());
            derived.push(core.replace('+', "-").replace('/', "_"));
        }
    }
    derived.push(STANDARD.encode(bytes));
    derived.push(URL_SAFE.encode(bytes));
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    derived.push(hex.to_ascii_uppercase());
    derived.push(hex);
    derived.push(
        percent_encoding::utf8_percent_encode(value, percent_encoding::NON_ALPHANUMERIC)
            .to_string(),
    );
    derived.push(percent_encoding::utf8_percent_encode(value, URL_RESERVED).to_string());
    for d in derived {
        if d.len() >= MIN_DERIVED_LEN && !out.contains(&d) {
            out.push(d);
        }
    }
    out
}

/// What URL encoders escape: everything but RFC 3986's unreserved characters.
const URL_RESERVED: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// Replaces secret values with `[REDACTED:NAME]`.
///
/// All values are searched for in one pass (Aho-Corasick, leftmost-longest: the earliest
/// occurrence wins, and of two starting at the same place the longer one).
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    /// (value, marker), longest value first; index = the matcher's pattern id.
    secrets: Vec<(String, String)>,
    /// Finds every value at once; `None` when there are no secrets (or the automaton could
    /// not be built, in which case [`Redactor::next_match`] searches value by value).
    matcher: Option<AhoCorasick>,
    /// Whether every value appears verbatim in JSON text when it occurs in a JSON string
    /// (no `"`, `\` or control character, which serde_json escapes).
    json_verbatim: bool,
}

impl Redactor {
    /// A redactor for `(name, value)` pairs. Values shorter than [`MIN_SECRET_LEN`] bytes are
    /// ignored; when two names share a value the first name wins.
    pub fn new(secrets: Vec<(String, String)>) -> Self {
        let mut out: Vec<(String, String)> = Vec::with_capacity(secrets.len());
        for (name, value) in secrets {
            if value.len() < MIN_SECRET_LEN {
                continue;
            }
            for form in forms(&value) {
                if !out.iter().any(|(v, _)| *v == form) {
                    out.push((form, format!("[REDACTED:{name}]")));
                }
            }
        }
        Self::from_pairs(out)
    }

    /// Build from (value, marker) pairs with distinct values.
    fn from_pairs(mut secrets: Vec<(String, String)>) -> Self {
        // Longest first, so a secret that contains another is replaced whole. The sort is
        // stable, so equal lengths keep their given order.
        secrets.sort_by_key(|(v, _)| std::cmp::Reverse(v.len()));
        let matcher = if secrets.is_empty() {
            None
        } else {
            AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostLongest)
                .build(secrets.iter().map(|(v, _)| v.as_str()))
                .map_err(|e| tracing::debug!(error = %e, "secret matcher not built; searching one by one"))
                .ok()
        };
        let json_verbatim = secrets
            .iter()
            .all(|(v, _)| !v.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20));
        Redactor {
            secrets,
            matcher,
            json_verbatim,
        }
    }

    /// A redactor for the named environment variables' current values. Unset, non-UTF-8,
    /// empty and short (< [`MIN_SECRET_LEN`]) values are ignored.
    pub fn from_env(names: &[String]) -> Self {
        Self::from_env_and(names, Vec::new())
    }

    /// [`Redactor::from_env`] plus `more` (name, value) pairs (credentials found elsewhere).
    pub fn from_env_and(names: &[String], more: Vec<(String, String)>) -> Self {
        let mut pairs: Vec<(String, String)> = names
            .iter()
            .filter_map(|n| std::env::var(n).ok().map(|v| (n.clone(), v)))
            .collect();
        pairs.extend(more);
        Self::new(pairs)
    }

    /// Whether there is nothing to redact.
    pub fn is_empty(&self) -> bool {
        self.secrets.is_empty()
    }

    /// `s` with every secret value replaced by its marker. Borrows `s` when nothing matched.
    pub fn redact<'a>(&self, s: &'a str) -> Cow<'a, str> {
        if self.is_empty() {
            return Cow::Borrowed(s);
        }
        let Some(first) = self.next_match(s, 0) else {
            return Cow::Borrowed(s);
        };
        let mut out = String::with_capacity(s.len());
        let mut pos = 0;
        let mut hit = Some(first);
        while let Some((at, idx)) = hit {
            let (value, marker) = &self.secrets[idx];
            out.push_str(&s[pos..at]);
            out.push_str(marker);
            pos = at + value.len();
            hit = self.next_match(s, pos);
        }
        out.push_str(&s[pos..]);
        Cow::Owned(out)
    }

    /// The earliest secret occurrence at or after `from`: (byte offset, secret index). On a tie
    /// the longest secret wins (they are sorted longest first).
    fn next_match(&self, s: &str, from: usize) -> Option<(usize, usize)> {
        let hay = s.get(from..)?;
        if let Some(ac) = &self.matcher {
            return ac
                .find(hay)
                .map(|m| (from + m.start(), m.pattern().as_usize()));
        }
        let mut best: Option<(usize, usize)> = None;
        for (idx, (value, _)) in self.secrets.iter().enumerate() {
            if let Some(off) = hay.find(value.as_str()) {
                let at = from + off;
                if best.is_none_or(|(b, _)| at < b) {
                    best = Some((at, idx));
                }
            }
        }
        best
    }

    /// Whether any secret value occurs in `bytes`.
    pub(crate) fn occurs_in(&self, bytes: &[u8]) -> bool {
        match &self.matcher {
            Some(ac) => ac.is_match(bytes),
            None => self
                .secrets
                .iter()
                .any(|(v, _)| bytes.windows(v.len()).any(|w| w == v.as_bytes())),
        }
    }

    /// `value` as compact JSON with every string (and object key) redacted, as
    /// [`Redactor::redact_value`] then `serde_json::to_vec` would give.
    ///
    /// Fast path: `value` is serialized once and, when no secret occurs in the JSON text (one
    /// Aho-Corasick pass), those bytes are the answer. A secret inside a JSON string always
    /// shows in the text when it has no character JSON escapes; for a secret that has one, or
    /// when a secret does occur, the value is converted, redacted string by string and
    /// serialized again.
    pub fn to_redacted_json<T: Serialize + ?Sized>(
        &self,
        value: &T,
    ) -> serde_json::Result<Vec<u8>> {
        let bytes = serde_json::to_vec(value)?;
        if self.is_empty() || (self.json_verbatim && !self.occurs_in(&bytes)) {
            return Ok(bytes);
        }
        let mut v: Value = serde_json::from_slice(&bytes)?;
        self.redact_value(&mut v);
        serde_json::to_vec(&v)
    }

    /// Redact every string inside `v` (object keys included), in place.
    pub fn redact_value(&self, v: &mut Value) {
        if self.is_empty() {
            return;
        }
        match v {
            Value::String(s) => {
                if let Cow::Owned(r) = self.redact(s) {
                    *s = r;
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|i| self.redact_value(i)),
            Value::Object(map) => {
                let needs_key_change = map.keys().any(|k| self.next_match(k, 0).is_some());
                if needs_key_change {
                    let old = std::mem::take(map);
                    for (k, mut val) in old {
                        self.redact_value(&mut val);
                        map.insert(self.redact(&k).into_owned(), val);
                    }
                } else {
                    map.values_mut().for_each(|i| self.redact_value(i));
                }
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }
}

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

/// A redactor for every secret registered so far ([`register_for_logs`]): for output that is
/// written outside a task's own sinks (spill files).
pub fn registered() -> Redactor {
    let secrets = match LOG_SECRETS.read() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    };
    secrets.clone().unwrap_or_default()
}

/// Redact the file at `path` in place with every registered secret (a spill file).
pub fn redact_file(path: &Path) -> std::io::Result<()> {
    let red = registered();
    if red.is_empty() {
        return Ok(());
    }
    let bytes = std::fs::read(path)?;
    if !red.occurs_in(&bytes) {
        return Ok(());
    }
    let text = String::from_utf8_lossy(&bytes);
    std::fs::write(path, red.redact(&text).as_bytes())
}

/// Secrets of every task started so far, for the log writer and spill files.
static LOG_SECRETS: std::sync::RwLock<Option<Redactor>> = std::sync::RwLock::new(None);

/// Redact `redactor`'s secrets in every log line from now on, and in spill files (logs are
/// process-wide; a task registers its secrets when it starts).
pub fn register_for_logs(redactor: &Redactor) {
    if redactor.is_empty() {
        return;
    }
    // Spilled command output is redacted in place before anyone reads it.
    crate::process::set_spill_filter(redact_file);
    let mut all = match LOG_SECRETS.write() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    };
    let mut pairs = all.as_ref().map(|r| r.secrets.clone()).unwrap_or_default();
    for pair in &redactor.secrets {
        if !pairs.iter().any(|(v, _)| *v == pair.0) {
            pairs.push(pair.clone());
        }
    }
    *all = Some(Redactor::from_pairs(pairs));
}

/// Run `f` with the redactor of every secret registered so far ([`register_for_logs`]), if
/// any, without copying it (the log writer calls this for each line).
pub(crate) fn with_registered<R>(f: impl FnOnce(Option<&Redactor>) -> R) -> R {
    let secrets = match LOG_SECRETS.read() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    };
    f(secrets.as_ref())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn r(pairs: &[(&str, &str)]) -> Redactor {
        Redactor::new(
            pairs
                .iter()
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect(),
        )
    }

    #[test]
    fn replaces_every_occurrence_with_marker() {
        let red = r(&[("API_KEY", "sk-ant-123456")]);
        assert_eq!(
            red.redact("key=sk-ant-123456 again sk-ant-123456."),
            "key=[REDACTED:API_KEY] again [REDACTED:API_KEY]."
        );
    }

    #[test]
    fn borrows_when_nothing_matches() {
        let red = r(&[("API_KEY", "sk-ant-123456")]);
        assert!(matches!(red.redact("harmless"), Cow::Borrowed(_)));
        assert!(matches!(Redactor::default().redact("x"), Cow::Borrowed(_)));
    }

    #[test]
    fn longest_value_wins_when_one_contains_another() {
        let red = r(&[("SHORT", "abcd"), ("LONG", "abcdefgh")]);
        assert_eq!(
            red.redact("abcdefgh abcd"),
            "[REDACTED:LONG] [REDACTED:SHORT]"
        );
    }

    #[test]
    fn markers_are_not_re_redacted() {
        // A secret whose value appears inside another secret's marker must not corrupt it.
        let red = r(&[("TOKEN", "REDACTED"), ("KEY", "hunter22")]);
        assert_eq!(red.redact("hunter22"), "[REDACTED:KEY]");
        assert_eq!(red.redact("REDACTED"), "[REDACTED:TOKEN]");
    }

    #[test]
    fn short_and_empty_values_are_ignored() {
        let red = r(&[("A", ""), ("B", "abc"), ("C", "abcd")]);
        assert_eq!(red.redact("abc abcd"), "abc [REDACTED:C]");
    }

    #[test]
    fn multibyte_text_around_secret() {
        let red = r(&[("K", "秘密の値です")]);
        assert_eq!(red.redact("é秘密の値ですü"), "é[REDACTED:K]ü");
    }

    #[test]
    fn from_env_reads_values_and_skips_unset() {
        // SAFETY: the variable name is unique to this test.
        unsafe { std::env::set_var("RUNNER_REDACT_TEST_SECRET", "s3cr3t-value") };
        let red = Redactor::from_env(&[
            "RUNNER_REDACT_TEST_SECRET".to_string(),
            "RUNNER_REDACT_TEST_UNSET_XYZ".to_string(),
        ]);
        assert_eq!(
            red.redact("v=s3cr3t-value"),
            "v=[REDACTED:RUNNER_REDACT_TEST_SECRET]"
        );
    }

    #[test]
    fn to_redacted_json_equals_redact_value_then_to_vec() {
        let v = json!({"a": ["x topsecret", 1, null, {"b": "topsecret"}], "topsecret": true, "c": "clean"});
        let clean = json!({"a": "nothing to see", "n": [1, 2]});
        let quoted = json!({"q": "say \"hi\" top\\secret", "t": "tab\there"});
        for red in [
            r(&[("K", "topsecret")]),
            r(&[
                ("K", "topsecret"),
                ("Q", "\"hi\""),
                ("B", "top\\secret"),
                ("T", "tab\there"),
            ]),
            Redactor::default(),
        ] {
            for val in [&v, &clean, &quoted] {
                let mut expected = val.clone();
                red.redact_value(&mut expected);
                assert_eq!(
                    red.to_redacted_json(val).unwrap(),
                    serde_json::to_vec(&expected).unwrap(),
                    "{val}"
                );
            }
        }
        // Secrets JSON escapes are still found (through the slow path).
        let red = r(&[("Q", "\"hi\"")]);
        let out = String::from_utf8(red.to_redacted_json(&quoted).unwrap()).unwrap();
        assert!(out.contains("[REDACTED:Q]") && !out.contains("hi"), "{out}");
    }

    #[test]
    fn many_secrets_match_like_one_by_one() {
        // Overlapping values: earliest occurrence first, the longest at one position.
        let red = r(&[
            ("A", "abcd"),
            ("B", "bcdefg"),
            ("C", "abcdefgh"),
            ("D", "cdef"),
        ]);
        assert_eq!(
            red.redact("xabcdefgh bcdefg abcdz cdefab"),
            "x[REDACTED:C] [REDACTED:B] [REDACTED:A]z [REDACTED:D]ab"
        );
        assert_eq!(red.redact("zbcdefgh"), "z[REDACTED:B]h");
    }

    #[test]
    fn every_line_and_common_encoding_is_redacted() {
        let secret = "first-line-secret\nsecond-line-secret";
        let red = r(&[("PEM", secret)]);
        assert_eq!(
            red.redact("only second-line-secret here"),
            "only [REDACTED:PEM] here"
        );
        let token = "tok/en+val=ue-1234";
        let red = r(&[("T", token)]);
        for prefix in ["", "a", "ab", "abc", "x-access-token:", "user:"] {
            let encoded = STANDARD.encode(format!("{prefix}{token}"));
            let out = red.redact(&encoded);
            assert!(out.contains("[REDACTED:T]"), "{prefix:?}: {out}");
            let url_safe = URL_SAFE.encode(format!("{prefix}{token}"));
            assert!(red.redact(&url_safe).contains("[REDACTED:T]"), "{prefix:?}");
        }
        let hex: String = token.bytes().map(|b| format!("{b:02x}")).collect();
        assert_eq!(red.redact(&hex), "[REDACTED:T]");
        assert_eq!(red.redact(&hex.to_uppercase()), "[REDACTED:T]");
        assert_eq!(red.redact("tok%2Fen%2Bval%3Due-1234"), "[REDACTED:T]");
    }

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

    #[test]
    fn redact_value_walks_strings_and_keys() {
        let red = r(&[("K", "topsecret")]);
        let mut v = json!({"a": ["x topsecret", 1, null, {"b": "topsecret"}], "topsecret": true});
        red.redact_value(&mut v);
        assert_eq!(
            v,
            json!({"a": ["x [REDACTED:K]", 1, null, {"b": "[REDACTED:K]"}], "[REDACTED:K]": true})
        );
    }
}
