//! Every deserialization error of a spec, not only the first (what `runner validate` reports):
//! the key each error is about is taken out of the parsed document and the rest deserialized
//! again, until it deserializes or no key can be taken out. The spec that finally
//! deserializes lets the semantic checks run on the keys that were right; errors about the keys
//! taken out are left to the deserialization errors.

use yaml_serde::{Mapping, Value};

use super::errors::SpecError;
use super::types::TaskSpec;

/// Most deserialization errors reported for one file.
const MAX_ERRORS: usize = 50;

/// What deserializing a spec found: the spec without the keys that were wrong (when the rest
/// deserializes), every error, and the key paths taken out.
pub(crate) struct Deserialized {
    /// The spec without the keys taken out, if it deserializes.
    pub spec: Option<TaskSpec>,
    /// One error per key taken out, the first as deserializing the file itself reported it.
    pub errors: Vec<SpecError>,
    /// The key paths taken out (`limits.max_turns`, `tools`).
    pub removed: Vec<String>,
}

impl Deserialized {
    /// Whether an error at `key` (a semantic check's key path) follows from a key taken out:
    /// the key itself, one under it, or the prompt when `prompt` or `prompt_file` was.
    pub(crate) fn covers(&self, key: &str) -> bool {
        self.removed.iter().any(|r| {
            key == r
                || key.starts_with(&format!("{r}."))
                || key.starts_with(&format!("{r}["))
                || (matches!(r.as_str(), "prompt" | "prompt_file")
                    && matches!(key, "prompt" | "prompt_file"))
        })
    }
}

/// Deserialize `value` (the parsed spec) into a [`TaskSpec`], collecting every error.
/// `first` is the error deserializing the file's text gave (with its raw message), `explain`
/// turns a deserialization error of some text into a [`SpecError`] (message and help),
/// `relocate` points an error at a key path of the file, and `placeholder_name` is the `name`
/// put in when the spec has none, so the other keys can still be checked.
pub(crate) fn every_error(
    mut value: Value,
    first: (SpecError, String),
    explain: &dyn Fn(&str, &yaml_serde::Error) -> SpecError,
    relocate: &dyn Fn(&str, SpecError) -> SpecError,
    placeholder_name: &str,
) -> Deserialized {
    let (first, mut raw) = first;
    let mut out = Deserialized {
        spec: None,
        errors: vec![first],
        removed: Vec::new(),
    };
    while out.errors.len() < MAX_ERRORS {
        let Some(key) = error_key(&raw) else { break };
        let taken = if key.is_empty() {
            put_name(&mut value, placeholder_name)
        } else {
            remove(&mut value, &key)
        };
        let Some(taken) = taken else { break };
        if !taken.is_empty() {
            out.removed.push(taken);
        }
        let Ok(text) = yaml_serde::to_string(&value) else {
            break;
        };
        match yaml_serde::from_str::<TaskSpec>(&text) {
            Ok(spec) => {
                out.spec = Some(spec);
                break;
            }
            Err(e) => {
                raw = e.to_string();
                let key = error_key(&raw).unwrap_or_default();
                let explained = explain(&text, &e);
                out.errors.push(relocate(&key, explained));
            }
        }
    }
    out
}

/// The key path a deserialization error is about: `limits.max_turns` for `limits.max_turns:
/// invalid type: …`, `limits.foo` for `limits: unknown field \`foo\``, `` (the document) for
/// a missing top-level field. `None` when the message names no key.
fn error_key(raw: &str) -> Option<String> {
    let (path, rest) = match raw.split_once(": ") {
        Some((p, rest)) if !p.is_empty() && !p.contains(' ') => (p.to_string(), rest),
        _ => (String::new(), raw),
    };
    let field = |prefix: &str| {
        rest.strip_prefix(prefix)
            .and_then(|r| r.split('`').next())
            .map(str::to_string)
    };
    if let Some(f) = field("unknown field `") {
        return Some(if path.is_empty() {
            f
        } else {
            format!("{path}.{f}")
        });
    }
    if rest.starts_with("missing field `") {
        // A nested value without a required field goes as a whole; the document keeps going
        // with a placeholder for `name`, its one required field.
        return Some(path);
    }
    (!path.is_empty()).then_some(path)
}

/// Give the document a `name` when it has none. Returns "" when it did (nothing was taken
/// out), `None` when it already had one (the error was about something else).
fn put_name(value: &mut Value, name: &str) -> Option<String> {
    let Value::Mapping(m) = value else {
        return None;
    };
    let key = Value::String("name".into());
    if m.contains_key(&key) {
        return None;
    }
    m.insert(key, Value::String(name.into()));
    Some(String::new())
}

/// Take the value at `path` out of `value`: a mapping key goes; a list whose item is wrong
/// goes whole (the items after it would change index), while a key inside an item goes alone.
/// Returns the key path taken out, `None` when `path` is not in the document.
fn remove(value: &mut Value, path: &str) -> Option<String> {
    let mut node = value;
    let mut rest = path;
    let mut walked = String::new();
    loop {
        if let Value::Tagged(t) = node {
            node = &mut t.value;
            continue;
        }
        let Value::Mapping(m) = node else {
            return None;
        };
        let key = longest_key(m, rest)?;
        let mut after = &rest[key.len()..];
        walked = if walked.is_empty() {
            key.clone()
        } else {
            format!("{walked}.{key}")
        };
        let mut indices = Vec::new();
        while let Some(inner) = after.strip_prefix('[') {
            let (i, tail) = inner.split_once(']')?;
            indices.push(i.parse::<usize>().ok()?);
            after = tail;
        }
        if after.is_empty() {
            m.remove(Value::String(key))?;
            return Some(walked);
        }
        rest = after.strip_prefix('.')?;
        let mut child = m.get_mut(Value::String(key))?;
        for i in indices {
            child = match child {
                Value::Sequence(items) => items.get_mut(i)?,
                _ => return None,
            };
            walked = format!("{walked}[{i}]");
        }
        node = child;
    }
}

/// The longest string key of `m` that `path` starts with, followed by the end, `.` or `[`
/// (keys may hold dots: `models.gpt-4.1.input_usd_per_mtok`).
fn longest_key(m: &Mapping, path: &str) -> Option<String> {
    m.keys()
        .filter_map(Value::as_str)
        .filter(|k| {
            path.strip_prefix(k)
                .is_some_and(|after| after.is_empty() || after.starts_with(['.', '[']))
        })
        .max_by_key(|k| k.len())
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_keys() {
        assert_eq!(
            error_key("limits.max_turns: invalid type: string \"x\", expected u32").as_deref(),
            Some("limits.max_turns")
        );
        assert_eq!(
            error_key("limits: unknown field `turns`, expected one of `max_turns`").as_deref(),
            Some("limits.turns")
        );
        assert_eq!(
            error_key("unknown field `foo`, expected one of `name`").as_deref(),
            Some("foo")
        );
        assert_eq!(error_key("missing field `name`").as_deref(), Some(""));
        assert_eq!(error_key("something odd happened"), None);
    }

    #[test]
    fn removes_keys_and_whole_lists() {
        let mut v: Value = yaml_serde::from_str(
            "limits: {max_turns: x, timeout: 5m}\ntools: [Read, 3]\nmodels: {gpt-4.1: {a: 1}}\n",
        )
        .unwrap();
        assert_eq!(
            remove(&mut v, "limits.max_turns").as_deref(),
            Some("limits.max_turns")
        );
        assert_eq!(remove(&mut v, "tools[1]").as_deref(), Some("tools"));
        let mut w: Value = yaml_serde::from_str("verify: [{run: a, timout: 5}]\n").unwrap();
        assert_eq!(
            remove(&mut w, "verify[0].timout").as_deref(),
            Some("verify[0].timout")
        );
        assert_eq!(yaml_serde::to_string(&w).unwrap(), "verify:\n- run: a\n");
        assert_eq!(
            remove(&mut v, "models.gpt-4.1.a").as_deref(),
            Some("models.gpt-4.1.a")
        );
        assert_eq!(remove(&mut v, "nothing.here"), None);
        let left = yaml_serde::to_string(&v).unwrap();
        assert!(
            left.contains("timeout: 5m") && !left.contains("tools"),
            "{left}"
        );
    }
}
