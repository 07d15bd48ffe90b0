//! The table of built-in tools: adding a tool is its file and one row here.

use std::sync::Arc;

use super::{DynTool, Erased};

/// One built-in tool.
pub(crate) struct Builtin {
    /// The name a spec's `tools:` and the model use.
    pub name: &'static str,
    /// A fresh instance.
    pub make: fn() -> Arc<dyn DynTool>,
}

/// Every built-in tool, in offer order.
pub(crate) const BUILTINS: &[Builtin] = &[
    Builtin {
        name: "Read",
        make: || Arc::new(Erased(Arc::new(super::read::ReadTool))),
    },
    Builtin {
        name: "Write",
        make: || Arc::new(Erased(Arc::new(super::write::WriteTool))),
    },
    Builtin {
        name: "Edit",
        make: || Arc::new(Erased(Arc::new(super::edit::EditTool))),
    },
    Builtin {
        name: "Bash",
        make: || Arc::new(Erased(Arc::new(super::bash::BashTool))),
    },
    Builtin {
        name: "Glob",
        make: || Arc::new(Erased(Arc::new(super::glob::GlobTool))),
    },
    Builtin {
        name: "Grep",
        make: || Arc::new(Erased(Arc::new(super::grep::GrepTool))),
    },
    Builtin {
        name: "TodoWrite",
        make: || Arc::new(Erased(Arc::new(super::todo::TodoWriteTool))),
    },
];

/// The built-in tool called `name`.
pub fn make(name: &str) -> Option<Arc<dyn DynTool>> {
    BUILTINS.iter().find(|b| b.name == name).map(|b| (b.make)())
}

/// Every built-in tool's name, in offer order.
pub fn names() -> Vec<&'static str> {
    BUILTINS.iter().map(|b| b.name).collect()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use serde_json::Value;

    use super::*;

    /// The properties and required fields a JSON Schema names.
    fn shape(schema: &Value) -> (BTreeSet<String>, BTreeSet<String>) {
        let props = schema["properties"]
            .as_object()
            .map(|o| o.keys().cloned().collect())
            .unwrap_or_default();
        let required = schema["required"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default();
        (props, required)
    }

    #[test]
    fn names_are_unique_and_made_tools_answer_to_them() {
        let mut seen = BTreeSet::new();
        for b in BUILTINS {
            assert!(seen.insert(b.name), "{} twice", b.name);
            assert_eq!((b.make)().name(), b.name);
        }
    }

    #[test]
    fn the_spec_default_tools_are_built_in_in_offer_order() {
        let all = names();
        let defaults: Vec<&str> = crate::spec::DEFAULT_TOOLS.to_vec();
        let in_order: Vec<&str> = all
            .iter()
            .copied()
            .filter(|n| defaults.contains(n))
            .collect();
        assert_eq!(in_order, defaults);
    }

    #[test]
    fn typed_inputs_match_the_published_schemas() {
        for b in BUILTINS {
            let published = (b.make)().spec().input_schema;
            let typed = (b.make)().typed_schema();
            assert_eq!(shape(&typed), shape(&published), "{}", b.name);
        }
    }
}
