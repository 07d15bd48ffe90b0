//! The spec's `sandbox:` section: how the commands a task runs are confined by the kernel.

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Whether commands are confined.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SandboxMode {
    /// Confine where the kernel can (Linux with Landlock); elsewhere run unconfined and say so
    /// loudly (log, init record, JUnit, step summary).
    #[default]
    Auto,
    /// Confine, or refuse to run (exit 2, before anything runs) where the kernel cannot.
    Enforce,
    /// No confinement.
    Off,
}

impl SandboxMode {
    /// The spec's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxMode::Auto => "auto",
            SandboxMode::Enforce => "enforce",
            SandboxMode::Off => "off",
        }
    }

    /// Parse the spec/CLI spelling.
    pub fn parse(s: &str) -> Option<SandboxMode> {
        Some(match s {
            "auto" => SandboxMode::Auto,
            "enforce" => SandboxMode::Enforce,
            "off" => SandboxMode::Off,
            _ => return None,
        })
    }
}

/// Network access of confined commands.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum NetworkSetting {
    /// No network: no TCP connection or listening socket, no UDP (so no DNS), no raw or
    /// netlink sockets. (Unix sockets are governed by `unix_sockets`.)
    #[default]
    None,
    /// Unrestricted network.
    Allow,
    /// Only these hosts, through runner's egress proxy (`HTTPS_PROXY`/`HTTP_PROXY`/`ALL_PROXY`):
    /// exact names (`crates.io`) or a leading wildcard (`*.npmjs.org`, which does not match
    /// `npmjs.org` itself). Every connection attempt is recorded.
    Hosts(Vec<String>),
}

impl NetworkSetting {
    /// How it is shown in reports: `none`, `allow`, or the host list.
    pub fn describe(&self) -> String {
        match self {
            NetworkSetting::None => "none".into(),
            NetworkSetting::Allow => "allow".into(),
            NetworkSetting::Hosts(h) => h.join(","),
        }
    }

    /// Parse the CLI spelling (`none` or `allow`).
    pub fn parse(s: &str) -> Option<NetworkSetting> {
        match s {
            "none" => Some(NetworkSetting::None),
            "allow" => Some(NetworkSetting::Allow),
            _ => None,
        }
    }
}

impl Serialize for NetworkSetting {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            NetworkSetting::None => s.serialize_str("none"),
            NetworkSetting::Allow => s.serialize_str("allow"),
            NetworkSetting::Hosts(h) => h.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for NetworkSetting {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Word(String),
            Hosts(Vec<String>),
        }
        match Raw::deserialize(d).map_err(|_| {
            serde::de::Error::custom(
                "expected `none`, `allow` or a list of host names such as [\"crates.io\", \"*.npmjs.org\"]",
            )
        })? {
            Raw::Word(w) => NetworkSetting::parse(&w).ok_or_else(|| {
                serde::de::Error::custom(format!(
                    "unknown network setting `{w}`; expected `none`, `allow` or a list of host names"
                ))
            }),
            Raw::Hosts(h) => Ok(NetworkSetting::Hosts(h)),
        }
    }
}

impl JsonSchema for NetworkSetting {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "NetworkSetting".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "`none` (no network), `allow` (unrestricted), or the hosts commands may reach through runner's egress proxy (`crates.io`, `*.npmjs.org`).",
            "oneOf": [
                {"type": "string", "enum": ["none", "allow"]},
                {"type": "array", "items": {"type": "string"}}
            ]
        })
    }
}

/// The `sandbox:` section. Confinement applies to every command runner starts: the Bash
/// tool's, hooks and verify checks.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SandboxSettings {
    /// `auto` (default), `enforce` or `off`.
    #[serde(default)]
    pub mode: SandboxMode,
    /// `none` (default), `allow`, or a list of hosts reached through runner's egress proxy.
    #[serde(default)]
    pub network: NetworkSetting,
    /// Extra writable paths (relative to the spec's directory, or absolute). The workdir (the
    /// task's worktree when it is isolated) and a private `TMPDIR` are always writable.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub write: Vec<PathBuf>,
    /// Paths no command may read, added to the built-in list of credential locations
    /// (`~/.ssh`, `~/.aws`, `~/.config/gh`, …). Relative to the spec's directory, absolute, or
    /// under `~/`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read_deny: Vec<PathBuf>,
    /// Paths under the home directory (or `$RUNNER_TEMP`) commands may read besides the
    /// toolchain locations (`~/.cargo`, `~/.npm`, `~/.cache`, …) and the writable roots: the
    /// rest of the home directory is unreadable to them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read: Vec<PathBuf>,
    /// Unix sockets (or directories of sockets) commands may connect to besides those inside
    /// the writable roots (`/var/run/docker.sock`, `$SSH_AUTH_SOCK`'s path); every other
    /// socket is refused. `SSH_AUTH_SOCK`, `DOCKER_HOST`, `DBUS_*_BUS_ADDRESS` and
    /// `XDG_RUNTIME_DIR` are removed from every child's environment unless they name a listed
    /// socket. Where the kernel cannot check socket paths (no seccomp user notifications),
    /// listing any socket makes every socket reachable, which the reports say.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unix_sockets: Vec<PathBuf>,
}

impl SandboxSettings {
    /// Whether nothing is set (the section is then left out of the resolved spec).
    pub fn is_unset(&self) -> bool {
        self == &SandboxSettings::default()
    }
}

/// A verify check's `sandbox:` (`off` runs the check unconfined).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CheckSandbox {
    /// Confined like the task's commands (default).
    #[default]
    On,
    /// Unconfined: the check runs with runner's own rights (it is code the pull request may
    /// change; opt out only for checks that need it).
    Off,
}

impl CheckSandbox {
    /// Whether it is the default (left out of the resolved spec).
    pub fn is_on(&self) -> bool {
        *self == CheckSandbox::On
    }
}
