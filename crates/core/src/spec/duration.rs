//! Durations in specs: `90s`, `30m`, `1h30m`, `500ms`, or a bare number of seconds.

use std::fmt;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A duration written as `1h30m`, `90s`, `500ms` or a number of seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpecDuration(pub Duration);

impl SpecDuration {
    /// Parse `1h30m`, `90s`, `500ms`, `2m`, `1.5h`-free forms; a bare integer is seconds.
    pub fn parse(s: &str) -> Result<Self, String> {
        let t = s.trim();
        if t.is_empty() {
            return Err("empty duration".into());
        }
        if let Ok(secs) = t.parse::<u64>() {
            return Ok(SpecDuration(Duration::from_secs(secs)));
        }
        let mut total = Duration::ZERO;
        let mut rest = t;
        while !rest.is_empty() {
            let digits = rest
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(rest.len());
            if digits == 0 {
                return Err(format!(
                    "invalid duration `{s}`: expected a number at `{rest}` (e.g. 90s, 30m, 1h30m, 500ms)"
                ));
            }
            let n: u64 = rest[..digits]
                .parse()
                .map_err(|_| format!("invalid duration `{s}`: number too large"))?;
            rest = &rest[digits..];
            let unit_len = rest
                .find(|c: char| c.is_ascii_digit())
                .unwrap_or(rest.len());
            let unit = &rest[..unit_len];
            rest = &rest[unit_len..];
            let d = match unit {
                "ms" => Duration::from_millis(n),
                "s" => Duration::from_secs(n),
                "m" => Duration::from_secs(n.saturating_mul(60)),
                "h" => Duration::from_secs(n.saturating_mul(3600)),
                "" => {
                    return Err(format!(
                        "invalid duration `{s}`: missing unit after {n} (use ms, s, m or h)"
                    ));
                }
                u => {
                    return Err(format!(
                        "invalid duration `{s}`: unknown unit `{u}` (use ms, s, m or h)"
                    ));
                }
            };
            total = total.saturating_add(d);
        }
        Ok(SpecDuration(total))
    }
}

impl fmt::Display for SpecDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = self.0.as_millis();
        if !ms.is_multiple_of(1000) {
            write!(f, "{ms}ms")
        } else {
            write!(f, "{}s", ms / 1000)
        }
    }
}

impl Serialize for SpecDuration {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for SpecDuration {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // A visitor rather than an untagged enum, so errors keep the value's position.
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = SpecDuration;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a duration such as `90s`, `30m`, `1h30m` or a number of seconds")
            }

            fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<SpecDuration, E> {
                Ok(SpecDuration(Duration::from_secs(n)))
            }

            fn visit_str<E: serde::de::Error>(self, t: &str) -> Result<SpecDuration, E> {
                SpecDuration::parse(t).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

impl JsonSchema for SpecDuration {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Duration".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A duration: `90s`, `30m`, `1h30m`, `500ms`, or a number of seconds.",
            "anyOf": [
                {"type": "string", "pattern": "^\\s*([0-9]+(ms|s|m|h))+\\s*$|^\\s*[0-9]+\\s*$"},
                {"type": "integer", "minimum": 0}
            ]
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_forms() {
        assert_eq!(
            SpecDuration::parse("90s").unwrap().0,
            Duration::from_secs(90)
        );
        assert_eq!(
            SpecDuration::parse("1h30m").unwrap().0,
            Duration::from_secs(5400)
        );
        assert_eq!(
            SpecDuration::parse("500ms").unwrap().0,
            Duration::from_millis(500)
        );
        assert_eq!(
            SpecDuration::parse("12").unwrap().0,
            Duration::from_secs(12)
        );
        assert!(SpecDuration::parse("5x").is_err());
        assert!(SpecDuration::parse("m").is_err());
        assert!(SpecDuration::parse("5").is_ok());
        assert!(SpecDuration::parse("").is_err());
    }
}
