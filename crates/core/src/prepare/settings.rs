//! Claude Code `settings.json` files named by `--settings FILE` or the spec's `settings:`.
//!
//! Read: `permissions.allow/deny/ask/additionalDirectories/defaultMode` and `hooks`. Other
//! keys (`env`, `model`, `mcpServers`, ...) are ignored with a warning, so an existing Claude
//! Code settings file loads unchanged. runner never looks for settings in the workdir
//! (`.claude/settings.json`, `.mcp.json`): on a pull-request run the pull request would choose
//! what executes.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::permissions::PermissionMode;
use crate::spec::hooks::HooksConfig;

/// A settings file that cannot be used; the message names the file and the key.
#[derive(Debug, thiserror::Error)]
#[error("settings file {}: {problem}", path.display())]
pub struct SettingsError {
    /// The file.
    pub path: PathBuf,
    /// What is wrong.
    pub problem: SettingsProblem,
}

/// What is wrong with a settings file (the key it concerns, when there is one).
#[derive(Debug, thiserror::Error)]
pub enum SettingsProblem {
    /// The file cannot be read.
    #[error("cannot read it: {0}")]
    Read(#[source] std::io::Error),
    /// The file is not JSON.
    #[error("not valid JSON: {0}")]
    Json(#[source] serde_json::Error),
    /// The top level is not an object.
    #[error("the top level must be a JSON object")]
    NotAnObject,
    /// `hooks` is not in Claude Code's hook shape.
    #[error("`hooks` is not in Claude Code's hook shape: {0}")]
    Hooks(#[source] serde_json::Error),
    /// `permissions` is not an object.
    #[error("`permissions` must be an object")]
    PermissionsNotAnObject,
    /// `permissions.KEY` is not an array.
    #[error("permissions.{0} must be an array of strings")]
    NotAnArray(String),
    /// `permissions.KEY[INDEX]` is not a string.
    #[error("permissions.{key}[{index}] must be a string")]
    NotAString {
        /// The key under `permissions`.
        key: String,
        /// The item's index.
        index: usize,
    },
    /// An additional directory under `~/` while `$HOME` is not set.
    #[error("`{0}` needs $HOME, which is not set")]
    NoHome(String),
    /// An additional directory that cannot be resolved.
    #[error("permissions.additionalDirectories: `{dir}` ({}) cannot be used: {source}", full.display())]
    Directory {
        /// The directory as written.
        dir: String,
        /// It resolved against the file's directory.
        full: PathBuf,
        /// Why it cannot be used.
        source: std::io::Error,
    },
    /// An additional directory that is a file.
    #[error("permissions.additionalDirectories: `{0}` is not a directory")]
    NotADirectory(String),
    /// `permissions.defaultMode` is not a string.
    #[error("permissions.defaultMode must be a string")]
    ModeNotAString,
    /// `permissions.defaultMode` names no permission mode.
    #[error(
        "permissions.defaultMode `{0}` is not one of default, acceptEdits, plan, dontAsk, bypassPermissions"
    )]
    UnknownMode(String),
}

/// What runner takes from one settings file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Settings {
    /// The file it came from (absolute).
    pub path: PathBuf,
    /// `permissions.allow`.
    pub allow: Vec<String>,
    /// `permissions.deny`.
    pub deny: Vec<String>,
    /// `permissions.ask`.
    pub ask: Vec<String>,
    /// `permissions.additionalDirectories`, resolved against the file's directory.
    pub additional_directories: Vec<PathBuf>,
    /// `permissions.defaultMode`.
    pub default_mode: Option<PermissionMode>,
    /// `hooks`.
    pub hooks: HooksConfig,
}

/// Load `path` (relative paths against `base`).
pub fn load(base: &Path, path: &Path) -> Result<Settings, SettingsError> {
    let full = base.join(path);
    let err = |problem: SettingsProblem| SettingsError {
        path: full.clone(),
        problem,
    };
    let text = std::fs::read_to_string(&full).map_err(|e| err(SettingsProblem::Read(e)))?;
    let root: Value = serde_json::from_str(&text).map_err(|e| err(SettingsProblem::Json(e)))?;
    let Value::Object(root) = root else {
        return Err(err(SettingsProblem::NotAnObject));
    };
    let dir = full.parent().unwrap_or(base).to_path_buf();
    let mut out = Settings {
        path: full.clone(),
        ..Settings::default()
    };
    for (key, value) in &root {
        match key.as_str() {
            "permissions" => read_permissions(value, &dir, &mut out).map_err(&err)?,
            "hooks" => {
                out.hooks = serde_json::from_value(value.clone())
                    .map_err(|e| err(SettingsProblem::Hooks(e)))?;
            }
            "$schema" => {}
            other => tracing::warn!(
                file = %full.display(),
                "settings key `{other}` is not used by runner; ignored"
            ),
        }
    }
    Ok(out)
}

fn read_permissions(v: &Value, dir: &Path, out: &mut Settings) -> Result<(), SettingsProblem> {
    let Value::Object(p) = v else {
        return Err(SettingsProblem::PermissionsNotAnObject);
    };
    for (key, value) in p {
        match key.as_str() {
            "allow" => out.allow = strings(key, value)?,
            "deny" => out.deny = strings(key, value)?,
            "ask" => out.ask = strings(key, value)?,
            "additionalDirectories" => {
                for d in strings(key, value)? {
                    let expanded = match d.strip_prefix("~/") {
                        Some(rest) => match std::env::var_os("HOME") {
                            Some(h) => PathBuf::from(h).join(rest),
                            None => return Err(SettingsProblem::NoHome(d)),
                        },
                        None => PathBuf::from(&d),
                    };
                    let full = dir.join(expanded);
                    let canon = match std::fs::canonicalize(&full) {
                        Ok(canon) => canon,
                        Err(source) => {
                            return Err(SettingsProblem::Directory {
                                dir: d,
                                full,
                                source,
                            });
                        }
                    };
                    if !canon.is_dir() {
                        return Err(SettingsProblem::NotADirectory(d));
                    }
                    out.additional_directories.push(canon);
                }
            }
            "defaultMode" => {
                let s = value.as_str().ok_or(SettingsProblem::ModeNotAString)?;
                out.default_mode = Some(
                    PermissionMode::parse(s)
                        .ok_or_else(|| SettingsProblem::UnknownMode(s.to_string()))?,
                );
            }
            other => {
                tracing::warn!("settings key `permissions.{other}` is not used by runner; ignored");
            }
        }
    }
    Ok(())
}

fn strings(key: &str, v: &Value) -> Result<Vec<String>, SettingsProblem> {
    let Value::Array(items) = v else {
        return Err(SettingsProblem::NotAnArray(key.to_string()));
    };
    items
        .iter()
        .enumerate()
        .map(|(i, x)| {
            x.as_str()
                .map(String::from)
                .ok_or_else(|| SettingsProblem::NotAString {
                    key: key.to_string(),
                    index: i,
                })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loads_claude_code_settings() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("docs")).unwrap();
        let f = dir.path().join("settings.json");
        std::fs::write(
            &f,
            r#"{"$schema":"x","env":{"A":"1"},"model":"m",
               "permissions":{"allow":["Bash(npm test)"],"deny":["Bash(git push:*)"],"ask":["WebFetch"],
                              "additionalDirectories":["docs"],"defaultMode":"acceptEdits","disableBypassPermissionsMode":"disable"},
               "hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"x.sh","timeout":5}]}]}}"#,
        )
        .unwrap();
        let s = load(dir.path(), Path::new("settings.json")).unwrap();
        assert_eq!(s.allow, vec!["Bash(npm test)"]);
        assert_eq!(s.deny, vec!["Bash(git push:*)"]);
        assert_eq!(s.ask, vec!["WebFetch"]);
        assert_eq!(s.default_mode, Some(PermissionMode::AcceptEdits));
        assert_eq!(
            s.additional_directories,
            vec![std::fs::canonicalize(dir.path().join("docs")).unwrap()]
        );
        assert_eq!(s.hooks["PreToolUse"][0].hooks[0].command, "x.sh");
    }

    #[test]
    fn bad_files_are_errors_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        for (body, needle) in [
            ("not json", "not valid JSON"),
            ("[]", "JSON object"),
            (r#"{"permissions":{"allow":"Bash"}}"#, "array of strings"),
            (r#"{"permissions":{"deny":[1]}}"#, "deny[0]"),
            (r#"{"permissions":{"defaultMode":"yolo"}}"#, "yolo"),
            (
                r#"{"permissions":{"additionalDirectories":["nowhere"]}}"#,
                "nowhere",
            ),
            (
                r#"{"hooks":{"PreToolUse":[{"hooks":[{"command":"x"}]}]}}"#,
                "hook shape",
            ),
        ] {
            std::fs::write(dir.path().join("s.json"), body).unwrap();
            let e = load(dir.path(), Path::new("s.json")).unwrap_err();
            assert!(e.to_string().contains("s.json"), "{e}");
            assert!(e.to_string().contains(needle), "{body}: {e}");
        }
        let e = load(dir.path(), Path::new("missing.json")).unwrap_err();
        assert!(e.to_string().contains("cannot read"), "{e}");
    }
}
