//! How much a change to a published schema must raise [`SCHEMA_VERSION`](super::SCHEMA_VERSION):
//! additions are minor, removals and changed meanings major, changed descriptions a patch.
//!
//! A schema is compared as a set of facts: each leaf of the JSON document under its path,
//! with `required` and `enum` lists as sets of names and the branches of `oneOf`/`anyOf`/`allOf`
//! keyed by the `type`/`subtype` constant they match (so a record type added among others is an
//! addition, not a shift of every branch after it). A fact only in the new schema is an
//! addition; a fact gone, or whose value changed, is a removal.

use std::collections::BTreeMap;
use std::fmt;

use serde_json::Value;

/// The least version raise a change needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Bump {
    /// Nothing changed.
    None,
    /// Only words changed (`description`, `title`).
    Patch,
    /// Something was added (a field, a record type, a value).
    Minor,
    /// Something was removed or changed its meaning.
    Major,
}

/// What changed between two versions of a schema, and the raise it needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The least raise.
    pub bump: Bump,
    /// The first facts removed or changed (at most a few), for the message.
    pub removed: Vec<String>,
    /// The first facts added (at most a few).
    pub added: Vec<String>,
}

/// The keys whose values are words for people: changing them is a patch.
const WORDS: [&str; 2] = ["description", "title"];
/// How many facts of each kind a [`Change`] names.
const SHOWN: usize = 5;

/// Compare `old` with `new`, ignoring the version each records.
pub fn compare(old: &Value, new: &Value) -> Change {
    let (old_facts, new_facts) = (facts(old), facts(new));
    let mut removed = Vec::new();
    let mut added = Vec::new();
    let mut words = false;
    for (path, value) in &old_facts {
        match new_facts.get(path) {
            Some(v) if v == value => {}
            _ if is_words(path) => words = true,
            _ => removed.push(path.clone()),
        }
    }
    for path in new_facts.keys() {
        if !old_facts.contains_key(path) {
            if is_words(path) {
                words = true;
            } else {
                added.push(path.clone());
            }
        }
    }
    let bump = if !removed.is_empty() {
        Bump::Major
    } else if !added.is_empty() {
        Bump::Minor
    } else if words {
        Bump::Patch
    } else {
        Bump::None
    };
    removed.truncate(SHOWN);
    added.truncate(SHOWN);
    Change {
        bump,
        removed,
        added,
    }
}

fn is_words(path: &str) -> bool {
    path.rsplit('/')
        .next()
        .is_some_and(|last| WORDS.contains(&last))
}

/// The facts of `schema`: path to leaf value, without the recorded version.
fn facts(schema: &Value) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let root = match schema {
        Value::Object(m) => {
            let mut m = m.clone();
            m.remove(super::VERSION_KEY);
            Value::Object(m)
        }
        other => other.clone(),
    };
    walk(&root, String::new(), &mut out);
    out
}

fn walk(v: &Value, path: String, out: &mut BTreeMap<String, String>) {
    match v {
        Value::Object(m) => {
            if m.is_empty() {
                out.insert(path.clone(), "{}".into());
            }
            for (k, child) in m {
                let p = format!("{path}/{k}");
                match (k.as_str(), child) {
                    ("required" | "enum" | "type", Value::Array(items)) => {
                        for item in items {
                            out.insert(format!("{p}/={item}"), "in".into());
                        }
                    }
                    ("oneOf" | "anyOf" | "allOf" | "prefixItems", Value::Array(items)) => {
                        for (i, item) in items.iter().enumerate() {
                            walk(item, format!("{p}/{}", branch_key(item, i)), out);
                        }
                    }
                    _ => walk(child, p, out),
                }
            }
        }
        Value::Array(items) => {
            if items.is_empty() {
                out.insert(path.clone(), "[]".into());
            }
            for (i, item) in items.iter().enumerate() {
                walk(item, format!("{path}/{i}"), out);
            }
        }
        leaf => {
            out.insert(path, leaf.to_string());
        }
    }
}

/// A branch's key: the constants of its `type` and `subtype` properties, else its index.
fn branch_key(branch: &Value, index: usize) -> String {
    let tag = |name: &str| {
        branch
            .get("properties")
            .and_then(|p| p.get(name))
            .and_then(|t| t.get("const"))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    match (tag("type"), tag("subtype")) {
        (None, None) => format!("#{index}"),
        (t, s) => format!("[{}:{}]", t.unwrap_or_default(), s.unwrap_or_default()),
    }
}

/// A version as `major.minor.patch`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version(pub u64, pub u64, pub u64);

impl Version {
    /// Parse `major.minor.patch`.
    pub fn parse(s: &str) -> Option<Version> {
        let mut parts = s.split('.').map(|p| p.parse::<u64>().ok());
        let v = Version(parts.next()??, parts.next()??, parts.next()??);
        parts.next().is_none().then_some(v)
    }

    /// Whether going from `self` to `new` raises the version enough for `bump`.
    pub fn allows(self, new: Version, bump: Bump) -> bool {
        match bump {
            Bump::None => new >= self,
            Bump::Patch => new > self,
            Bump::Minor => new.0 > self.0 || (new.0 == self.0 && new.1 > self.1),
            Bump::Major => new.0 > self.0,
        }
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.0, self.1, self.2)
    }
}

/// Why the change from `old` (as recorded in it) to `new` (generated for `new_version`) is
/// not versioned right, or `None` when it is.
pub fn version_error(old: &Value, new: &Value, new_version: &str) -> Option<String> {
    let recorded = old.get(super::VERSION_KEY).and_then(Value::as_str);
    let Some(old_v) = recorded.and_then(Version::parse) else {
        return Some(format!(
            "the committed schema records no valid `{}`",
            super::VERSION_KEY
        ));
    };
    let Some(new_v) = Version::parse(new_version) else {
        return Some(format!("`{new_version}` is not major.minor.patch"));
    };
    let change = compare(old, new);
    if old_v.allows(new_v, change.bump) {
        return None;
    }
    Some(format!(
        "the schema changed ({:?}: removed or changed {:?}, added {:?}) but SCHEMA_VERSION \
         went from {old_v} to {new_v}: a {:?} change needs a higher {} version",
        change.bump,
        change.removed,
        change.added,
        change.bump,
        match change.bump {
            Bump::Major => "major",
            Bump::Minor => "minor (or major)",
            _ => "patch (or higher)",
        }
    ))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn schema(version: &str, props: Value, required: Value) -> Value {
        json!({
            "x-schema-version": version,
            "oneOf": [
                {"properties": {"type": {"const": "a"}, "n": {"type": "integer"}}},
                {"properties": {"type": {"const": "b"}}}
            ],
            "properties": props,
            "required": required
        })
    }

    fn base() -> Value {
        schema(
            "1.2.3",
            json!({"x": {"type": "string", "description": "an x"}, "y": {"type": "integer"}}),
            json!(["x"]),
        )
    }

    #[test]
    fn an_added_field_or_record_type_is_minor() {
        let mut new = base();
        new["properties"]["z"] = json!({"type": "boolean"});
        assert_eq!(compare(&base(), &new).bump, Bump::Minor);
        let mut new = base();
        new["oneOf"]
            .as_array_mut()
            .unwrap()
            .insert(0, json!({"properties": {"type": {"const": "0"}}}));
        assert_eq!(compare(&base(), &new).bump, Bump::Minor);
        let mut new = base();
        new["required"] = json!(["x", "y"]);
        assert_eq!(compare(&base(), &new).bump, Bump::Minor);
    }

    #[test]
    fn a_removed_field_or_changed_type_is_major() {
        let mut new = base();
        new["properties"].as_object_mut().unwrap().remove("y");
        let c = compare(&base(), &new);
        assert_eq!(c.bump, Bump::Major);
        assert_eq!(c.removed, ["/properties/y/type"]);
        let mut new = base();
        new["properties"]["y"]["type"] = json!("string");
        assert_eq!(compare(&base(), &new).bump, Bump::Major);
        let mut new = base();
        new["required"] = json!([]);
        assert_eq!(compare(&base(), &new).bump, Bump::Major);
        let mut new = base();
        new["oneOf"].as_array_mut().unwrap().remove(1);
        assert_eq!(compare(&base(), &new).bump, Bump::Major);
    }

    #[test]
    fn changed_words_are_a_patch_and_the_version_itself_is_no_change() {
        let mut new = base();
        new["properties"]["x"]["description"] = json!("the x");
        assert_eq!(compare(&base(), &new).bump, Bump::Patch);
        let mut new = base();
        new["x-schema-version"] = json!("9.0.0");
        assert_eq!(compare(&base(), &new).bump, Bump::None);
    }

    #[test]
    fn a_change_needs_the_matching_raise() {
        let mut added = base();
        added["properties"]["z"] = json!({"type": "boolean"});
        assert!(version_error(&base(), &added, "1.2.3").is_some());
        assert!(version_error(&base(), &added, "1.2.4").is_some());
        assert_eq!(version_error(&base(), &added, "1.3.0"), None);
        assert_eq!(version_error(&base(), &added, "2.0.0"), None);
        let mut removed = base();
        removed["properties"].as_object_mut().unwrap().remove("y");
        let e = version_error(&base(), &removed, "1.3.0").unwrap();
        assert!(e.contains("higher major version"), "{e}");
        assert_eq!(version_error(&base(), &removed, "2.0.0"), None);
        assert_eq!(version_error(&base(), &base(), "1.2.3"), None);
        assert!(version_error(&base(), &base(), "1.2").is_some());
    }
}
