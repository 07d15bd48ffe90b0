//! The spec's `instructions:` setting: which project instruction files (AGENTS.md,
//! CLAUDE.md) the first prompt carries.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The files `instructions: true` looks for, in this order in each directory.
pub const DEFAULT_INSTRUCTION_FILES: &[&str] = &["AGENTS.md", "CLAUDE.md"];

/// `instructions:`: `false` (the default: none), `true` (AGENTS.md then CLAUDE.md), or a list
/// of file names. Each name is looked for in the workdir and every directory above it up to
/// the repository root, nearest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Instructions {
    /// `true`: AGENTS.md then CLAUDE.md; `false`: no instructions.
    Enabled(bool),
    /// These file names (no directories), in this order.
    Files(Vec<String>),
}

impl Default for Instructions {
    fn default() -> Self {
        Instructions::Enabled(false)
    }
}

impl Instructions {
    /// Whether no file is read (left out of the resolved spec).
    pub fn is_off(&self) -> bool {
        self.file_names().is_empty()
    }

    /// The file names looked for, in order.
    pub fn file_names(&self) -> Vec<String> {
        match self {
            Instructions::Enabled(false) => Vec::new(),
            Instructions::Enabled(true) => DEFAULT_INSTRUCTION_FILES
                .iter()
                .map(|s| s.to_string())
                .collect(),
            Instructions::Files(f) => f.clone(),
        }
    }

    /// Why a listed name is not a plain file name, if one is not.
    pub fn check(&self) -> Result<(), String> {
        for name in self.file_names() {
            let plain = !name.is_empty()
                && name != "."
                && name != ".."
                && !name.contains('/')
                && !name.contains('\0');
            if !plain {
                return Err(format!(
                    "`{name}` is not a file name; `instructions` lists names such as AGENTS.md, looked for in the workdir and the directories above it"
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn true_false_and_lists() {
        let parse = |s: &str| yaml_serde::from_str::<Instructions>(s).unwrap();
        assert!(parse("false").is_off());
        assert_eq!(parse("true").file_names(), ["AGENTS.md", "CLAUDE.md"]);
        assert_eq!(parse("[CLAUDE.md]").file_names(), ["CLAUDE.md"]);
        assert!(parse("[]").is_off());
        assert!(parse("[docs/AGENTS.md]").check().is_err());
        assert!(parse("['..']").check().is_err());
        assert!(parse("true").check().is_ok());
    }
}
