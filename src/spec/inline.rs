//! A task given on the command line (`runner exec -p PROMPT`): a one-task spec built from
//! flags and loaded like a spec file, so it gets every check a file does. Its paths are relative
//! to the current directory, and an error in it names the flag the value came from.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::errors::SpecError;
use super::load::load_text;
use super::loaded::LoadedSpec;

pub use super::loaded::INLINE_PATH;

/// The task name when `--name` is not given.
pub const DEFAULT_INLINE_NAME: &str = "inline";

/// The flags of an inline task.
#[derive(Debug, Clone, Default)]
pub struct InlineTask {
    /// `-p/--prompt`.
    pub prompt: String,
    /// `--name` (default [`DEFAULT_INLINE_NAME`]).
    pub name: Option<String>,
    /// `-C/--cd`: the working directory.
    pub cd: Option<PathBuf>,
    /// `--tools`: the tools offered (default: the spec default).
    pub tools: Option<Vec<String>>,
    /// `--append-system-prompt`.
    pub append_system_prompt: Option<String>,
    /// `--add-dir`: extra directories the agent may read.
    pub add_dirs: Vec<PathBuf>,
    /// `--output-schema FILE`: structured output against this JSON Schema.
    pub output_schema: Option<PathBuf>,
}

impl InlineTask {
    /// The spec as YAML text, one `key: value` line per flag (each value a JSON flow scalar or
    /// collection, which YAML reads as written), with the flag each line came from.
    fn source(&self) -> (String, Vec<&'static str>) {
        let mut lines: Vec<(&str, Value, &'static str)> = vec![
            (
                "name",
                json!(self.name.as_deref().unwrap_or(DEFAULT_INLINE_NAME)),
                "--name",
            ),
            ("prompt", json!(self.prompt), "--prompt"),
        ];
        if let Some(d) = &self.cd {
            lines.push(("workdir", json!(d.to_string_lossy()), "--cd"));
        }
        if let Some(t) = &self.tools {
            lines.push(("tools", json!(t), "--tools"));
        }
        if let Some(a) = &self.append_system_prompt {
            lines.push(("system_prompt_append", json!(a), "--append-system-prompt"));
        }
        if !self.add_dirs.is_empty() {
            let dirs: Vec<_> = self.add_dirs.iter().map(|d| d.to_string_lossy()).collect();
            lines.push(("additional_directories", json!(dirs), "--add-dir"));
        }
        if let Some(s) = &self.output_schema {
            lines.push((
                "output",
                json!({"schema_file": s.to_string_lossy()}),
                "--output-schema",
            ));
        }
        let mut text = String::new();
        let mut flags = Vec::with_capacity(lines.len());
        for (key, value, flag) in lines {
            text.push_str(&format!("{key}: {value}\n"));
            flags.push(flag);
        }
        (text, flags)
    }

    /// Load the task as a spec whose directory is `cwd`. An error names the flag its value came
    /// from.
    pub fn load(&self, cwd: &Path) -> Result<LoadedSpec, SpecError> {
        let (source, flags) = self.source();
        let path = Path::new(INLINE_PATH);
        let attribute = |e: SpecError| {
            let flag = e
                .line
                .and_then(|l| flags.get(l.checked_sub(1)?))
                .copied()
                .unwrap_or("--prompt");
            e.with_flag(flag)
        };
        let mut all = load_text(path, cwd, source).map_err(attribute)?;
        match all.pop() {
            Some(task) if all.is_empty() => Ok(task),
            _ => Err(SpecError::file(path, "an inline task is one task").with_flag("--prompt")),
        }
    }
}

/// The flag of an inline task that sets the spec value at `key` (a key path).
pub fn flag_for_key(key: &str) -> Option<&'static str> {
    let top = key.split(['.', '[']).next().unwrap_or(key);
    Some(match top {
        "name" => "--name",
        "prompt" => "--prompt",
        "workdir" => "--cd",
        "tools" => "--tools",
        "system_prompt_append" => "--append-system-prompt",
        "additional_directories" => "--add-dir",
        "output" => "--output-schema",
        _ => return None,
    })
}

/// The tool names of a `--tools` value: commas or spaces separate them.
pub fn split_tools(value: &str) -> Vec<String> {
    value
        .split([',', ' ', '\t'])
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_a_spec_from_flags() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        let t = InlineTask {
            prompt: "fix \"the\" tests\nplease".into(),
            cd: Some("sub".into()),
            tools: Some(vec!["Read".into(), "Bash".into()]),
            append_system_prompt: Some("be brief".into()),
            ..Default::default()
        };
        let l = t.load(dir.path()).unwrap();
        assert_eq!(l.spec.name, "inline");
        assert_eq!(l.prompt, "fix \"the\" tests\nplease");
        assert_eq!(l.spec.tools, vec!["Read", "Bash"]);
        assert_eq!(l.spec.system_prompt_append.as_deref(), Some("be brief"));
        assert_eq!(
            l.workdir,
            std::fs::canonicalize(dir.path().join("sub")).unwrap()
        );
        assert_eq!(l.path, Path::new(INLINE_PATH));
    }

    #[test]
    fn errors_name_the_flag() {
        let dir = tempfile::tempdir().unwrap();
        let t = InlineTask {
            prompt: "hi".into(),
            cd: Some("missing".into()),
            ..Default::default()
        };
        let e = t.load(dir.path()).unwrap_err();
        assert_eq!(e.flag(), Some("--cd"));
        assert!(e.to_string().starts_with("--cd: workdir missing"), "{e}");
        let t = InlineTask {
            prompt: "hi".into(),
            name: Some("a b".into()),
            ..Default::default()
        };
        let e = t.load(dir.path()).unwrap_err();
        assert!(e.to_string().starts_with("--name: `name` \"a b\""), "{e}");
        let t = InlineTask {
            prompt: " ".into(),
            ..Default::default()
        };
        assert!(
            t.load(dir.path())
                .unwrap_err()
                .to_string()
                .starts_with("--prompt: ")
        );
    }

    #[test]
    fn splits_tools() {
        assert_eq!(split_tools("Read, Bash Edit"), vec!["Read", "Bash", "Edit"]);
    }
}
