//! What to export and where, from the standard `OTEL_*` variables and runner's switch.

use std::time::Duration;

/// runner's own switch (`--otel`, `RUNNER_OTEL`): whether to export regardless of the variables.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Switch {
    /// Export when an OTLP endpoint variable is set (the default).
    #[default]
    Auto,
    /// Export, to `http://localhost:4318` when no endpoint is set.
    On,
    /// Never export.
    Off,
}

/// A configuration the variables do not make sense of.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// An exporter variable names an exporter runner does not have.
    #[error("{var}={value}: runner exports only `otlp` (or `none`)")]
    Exporter {
        /// The variable.
        var: &'static str,
        /// Its value.
        value: String,
    },
    /// `OTEL_EXPORTER_OTLP_PROTOCOL` asks for something other than HTTP/protobuf.
    #[error("OTEL_EXPORTER_OTLP_PROTOCOL={0}: runner speaks only http/protobuf")]
    Protocol(String),
    /// `OTEL_EXPORTER_OTLP_TIMEOUT` is not a number of milliseconds.
    #[error("OTEL_EXPORTER_OTLP_TIMEOUT={0}: not a number of milliseconds")]
    Timeout(String),
}

/// The default OTLP/HTTP endpoint (`--otel on` without an endpoint variable).
pub const DEFAULT_ENDPOINT: &str = "http://localhost:4318";

/// How long one export may take, and so how long the final flush may hold the exit up, when
/// `OTEL_EXPORTER_OTLP_TIMEOUT` does not say.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);

/// A resolved export configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Export spans.
    pub traces: bool,
    /// Export metrics.
    pub metrics: bool,
    /// The endpoint when no variable names one (the SDK reads `OTEL_EXPORTER_OTLP_ENDPOINT`
    /// and the per-signal ones itself).
    pub fallback_endpoint: Option<String>,
    /// The bound of one export and of the final flush.
    pub timeout: Duration,
    /// Put prompt, response and tool content on the spans (redacted).
    pub content: bool,
}

impl Config {
    /// The configuration the variables (read through `var`) and the switch ask for; `None`
    /// when nothing is to be exported.
    pub fn from_env(
        switch: Switch,
        content: bool,
        var: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<Config>, ConfigError> {
        let set = |name: &str| var(name).filter(|v| !v.trim().is_empty());
        if switch == Switch::Off
            || set("OTEL_SDK_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
        {
            return Ok(None);
        }
        let endpoint = [
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
            "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
        ]
        .iter()
        .any(|n| set(n).is_some());
        if !endpoint && switch == Switch::Auto {
            return Ok(None);
        }
        if let Some(p) = set("OTEL_EXPORTER_OTLP_PROTOCOL")
            && p.trim() != "http/protobuf"
        {
            return Err(ConfigError::Protocol(p));
        }
        let wanted = |name: &'static str| -> Result<bool, ConfigError> {
            match set(name) {
                None => Ok(true),
                Some(v) => {
                    let mut otlp = false;
                    for part in v.split(',').map(str::trim) {
                        match part {
                            "otlp" => otlp = true,
                            "none" => {}
                            _ => {
                                return Err(ConfigError::Exporter {
                                    var: name,
                                    value: v.clone(),
                                });
                            }
                        }
                    }
                    Ok(otlp)
                }
            }
        };
        let traces = wanted("OTEL_TRACES_EXPORTER")?;
        let metrics = wanted("OTEL_METRICS_EXPORTER")?;
        // runner sends no log records: its logs go to stderr (and the CI log). `none` and
        // `otlp` are both accepted so a shared environment that sets them does not fail.
        wanted("OTEL_LOGS_EXPORTER")?;
        if !traces && !metrics {
            return Ok(None);
        }
        let timeout = match set("OTEL_EXPORTER_OTLP_TIMEOUT") {
            None => DEFAULT_TIMEOUT,
            Some(v) => Duration::from_millis(
                v.trim()
                    .parse::<u64>()
                    .map_err(|_| ConfigError::Timeout(v.clone()))?,
            ),
        };
        Ok(Some(Config {
            traces,
            metrics,
            fallback_endpoint: (!endpoint).then(|| DEFAULT_ENDPOINT.to_string()),
            timeout,
            content,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn cfg(switch: Switch, vars: &[(&str, &str)]) -> Result<Option<Config>, ConfigError> {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Config::from_env(switch, false, |n| map.get(n).cloned())
    }

    #[test]
    fn off_without_an_endpoint_or_when_disabled() {
        assert!(cfg(Switch::Auto, &[]).unwrap().is_none());
        let ep = ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1");
        assert!(cfg(Switch::Auto, &[ep]).unwrap().is_some());
        assert!(cfg(Switch::Off, &[ep]).unwrap().is_none());
        assert!(
            cfg(Switch::Auto, &[ep, ("OTEL_SDK_DISABLED", "TRUE")])
                .unwrap()
                .is_none()
        );
        let both_none = [
            ep,
            ("OTEL_TRACES_EXPORTER", "none"),
            ("OTEL_METRICS_EXPORTER", "none"),
        ];
        assert!(cfg(Switch::Auto, &both_none).unwrap().is_none());
    }

    #[test]
    fn on_switch_defaults_the_endpoint() {
        let c = cfg(Switch::On, &[]).unwrap().unwrap();
        assert_eq!(c.fallback_endpoint.as_deref(), Some(DEFAULT_ENDPOINT));
        assert_eq!(c.timeout, DEFAULT_TIMEOUT);
        let c = cfg(
            Switch::On,
            &[
                ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://x:1/v1/traces"),
                ("OTEL_METRICS_EXPORTER", "none"),
                ("OTEL_EXPORTER_OTLP_TIMEOUT", "250"),
            ],
        )
        .unwrap()
        .unwrap();
        assert_eq!(c.fallback_endpoint, None);
        assert!(c.traces && !c.metrics);
        assert_eq!(c.timeout, Duration::from_millis(250));
    }

    #[test]
    fn rejects_what_runner_cannot_export() {
        let ep = ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1");
        assert!(matches!(
            cfg(Switch::Auto, &[ep, ("OTEL_TRACES_EXPORTER", "jaeger")]),
            Err(ConfigError::Exporter { .. })
        ));
        assert!(matches!(
            cfg(Switch::Auto, &[ep, ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")]),
            Err(ConfigError::Protocol(_))
        ));
        assert!(matches!(
            cfg(Switch::Auto, &[ep, ("OTEL_EXPORTER_OTLP_TIMEOUT", "5s")]),
            Err(ConfigError::Timeout(_))
        ));
    }
}
