//! The [`Redactor`]: a set of named secrets and the compiled search for all their forms.

use std::borrow::Cow;
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use super::forms::MIN_SECRET_LEN;
use super::matcher::{self, Matcher};

/// Replaces secret values, in every form [`super::forms`] lists, with `[REDACTED:NAME]`.
#[derive(Clone, Default)]
pub struct Redactor {
    /// (name, value) of each secret, distinct values, in the order given.
    secrets: Vec<(String, String)>,
    /// The marker of each secret.
    markers: Vec<String>,
    /// The compiled search; `None` when there are no secrets.
    matcher: Option<Arc<Matcher>>,
    /// Whether every value appears verbatim in JSON text when it occurs in a JSON string
    /// (no `"`, `\` or control character, which serde_json escapes).
    json_verbatim: bool,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Names only: a debug print must not show the values.
        f.debug_struct("Redactor")
            .field("names", &self.markers)
            .finish()
    }
}

impl Redactor {
    /// A redactor for `(name, value)` pairs. Values shorter than [`MIN_SECRET_LEN`] bytes are
    /// ignored; when two names share a value the first name wins.
    pub fn new(secrets: Vec<(String, String)>) -> Self {
        let mut kept: Vec<(String, String)> = Vec::with_capacity(secrets.len());
        for (name, value) in secrets {
            if value.len() >= MIN_SECRET_LEN && !kept.iter().any(|(_, v)| *v == value) {
                kept.push((name, value));
            }
        }
        if kept.is_empty() {
            return Redactor::default();
        }
        let markers = kept
            .iter()
            .map(|(n, _)| format!("[REDACTED:{n}]"))
            .collect();
        let matcher = Matcher::build(kept.iter().map(|(_, v)| v.as_str()));
        let json_verbatim = kept
            .iter()
            .all(|(_, v)| !v.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20));
        Redactor {
            secrets: kept,
            markers,
            matcher: Some(Arc::new(matcher)),
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
        self.matcher.is_none()
    }

    /// The (name, value) pairs this redactor holds.
    pub fn pairs(&self) -> &[(String, String)] {
        &self.secrets
    }

    /// `s` with every secret, in every form, replaced by its marker (the whole original span,
    /// separators inside it included, widened to whole characters). Borrows `s` when nothing
    /// matched; everything outside the spans is unchanged.
    pub fn redact<'a>(&self, s: &'a str) -> Cow<'a, str> {
        let Some(m) = &self.matcher else {
            return Cow::Borrowed(s);
        };
        let mut spans = m.spans(s.as_bytes());
        if spans.is_empty() {
            return Cow::Borrowed(s);
        }
        for span in &mut spans {
            while !s.is_char_boundary(span.0) {
                span.0 -= 1;
            }
            while !s.is_char_boundary(span.1) {
                span.1 += 1;
            }
        }
        let spans = matcher::merge(spans);
        let mut out = String::with_capacity(s.len());
        let mut pos = 0;
        for (a, b, k) in spans {
            out.push_str(&s[pos..a]);
            out.push_str(&self.markers[k]);
            pos = b;
        }
        out.push_str(&s[pos..]);
        Cow::Owned(out)
    }

    /// [`Redactor::redact`] for bytes that need not be UTF-8 (a patch, a spilled file):
    /// spans are replaced byte for byte, everything else is left as it is.
    pub fn redact_bytes<'a>(&self, b: &'a [u8]) -> Cow<'a, [u8]> {
        let Some(m) = &self.matcher else {
            return Cow::Borrowed(b);
        };
        let spans = m.spans(b);
        if spans.is_empty() {
            return Cow::Borrowed(b);
        }
        let mut out = Vec::with_capacity(b.len());
        let mut pos = 0;
        for (a, e, k) in spans {
            out.extend_from_slice(&b[pos..a]);
            out.extend_from_slice(self.markers[k].as_bytes());
            pos = e;
        }
        out.extend_from_slice(&b[pos..]);
        Cow::Owned(out)
    }

    /// Whether any secret, in any form, occurs in `bytes`.
    pub fn occurs_in(&self, bytes: &[u8]) -> bool {
        self.matcher.as_ref().is_some_and(|m| m.occurs_in(bytes))
    }

    /// `value` as compact JSON with every string (and object key) redacted, as
    /// [`Redactor::redact_value`] then `serde_json::to_vec` would give.
    ///
    /// Fast path: `value` is serialized once and, when no form of any secret occurs in the
    /// JSON text (one pass of each search), those bytes are the answer. A form inside a JSON
    /// string always shows in the text when the secret has no character JSON escapes: the
    /// exact forms verbatim, the folded ones because [`super::normalize`] reads JSON's escapes
    /// (`\"`, `\\`, `\n`, `\r`, `\t`) as the characters they stand for. For a secret that has
    /// one, or when a form does occur, the value is converted, redacted string by string and
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
                let needs_key_change = map.keys().any(|k| self.occurs_in(k.as_bytes()));
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
