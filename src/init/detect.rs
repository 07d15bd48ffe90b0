//! The project's own commands, detected from the files at the repository root: what a
//! `runner init` template runs its tests and lints with, and the allow rules they need.

use std::path::Path;

/// How a project builds and checks itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Project {
    /// What was recognised (`cargo`, `pnpm`, `uv`, ...), for the spec's comment.
    pub kind: &'static str,
    /// The test command, e.g. `cargo test`.
    pub test: String,
    /// The lint command, e.g. `cargo clippy --all-targets -- -D warnings`.
    pub lint: String,
    /// Allow rules for those commands (`Bash(cargo test:*)`).
    pub rules: Vec<String>,
}

impl Project {
    fn new(kind: &'static str, test: &str, lint: &str, prefixes: &[&str]) -> Project {
        Project {
            kind,
            test: test.to_string(),
            lint: lint.to_string(),
            rules: prefixes.iter().map(|p| format!("Bash({p}:*)")).collect(),
        }
    }
}

/// The project at `dir`, by its marker files, first match wins: Cargo, then npm/pnpm/yarn,
/// Python (uv, Poetry, pytest), Go, Maven, Gradle, make. `None` when nothing is recognised.
pub(super) fn detect(dir: &Path) -> Option<Project> {
    let has = |f: &str| dir.join(f).exists();
    if has("Cargo.toml") {
        return Some(Project::new(
            "cargo",
            "cargo test",
            "cargo clippy --all-targets -- -D warnings",
            &["cargo test", "cargo clippy", "cargo build", "cargo fmt"],
        ));
    }
    if has("package.json") {
        let pm = if has("pnpm-lock.yaml") {
            "pnpm"
        } else if has("yarn.lock") {
            "yarn"
        } else {
            "npm"
        };
        let (test, lint) = (format!("{pm} test"), format!("{pm} run lint"));
        let mut p = Project::new("", &test, &lint, &[&test, &lint]);
        p.kind = pm;
        return Some(p);
    }
    if has("pyproject.toml") || has("setup.py") || has("pytest.ini") || has("setup.cfg") {
        let (kind, run) = if has("uv.lock") {
            ("uv", "uv run ")
        } else if has("poetry.lock") {
            ("poetry", "poetry run ")
        } else {
            ("pytest", "")
        };
        let (test, lint) = (format!("{run}pytest"), format!("{run}ruff check ."));
        let mut p = Project::new("", &test, &lint, &[&test, &format!("{run}ruff")]);
        p.kind = kind;
        return Some(p);
    }
    if has("go.mod") {
        return Some(Project::new(
            "go",
            "go test ./...",
            "go vet ./...",
            &["go test", "go vet", "go build"],
        ));
    }
    if has("pom.xml") {
        return Some(Project::new(
            "maven",
            "mvn -q test",
            "mvn -q verify",
            &["mvn -q test", "mvn -q verify"],
        ));
    }
    if has("build.gradle") || has("build.gradle.kts") {
        let gradle = if has("gradlew") {
            "./gradlew"
        } else {
            "gradle"
        };
        let (test, lint) = (format!("{gradle} test"), format!("{gradle} check"));
        let mut p = Project::new("", &test, &lint, &[&test, &lint]);
        p.kind = "gradle";
        return Some(p);
    }
    if has("Makefile") || has("makefile") {
        return Some(Project::new(
            "make",
            "make test",
            "make lint",
            &["make test", "make lint"],
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn detected(files: &[&str]) -> Option<Project> {
        let dir = tempfile::tempdir().unwrap();
        for f in files {
            std::fs::write(dir.path().join(f), "").unwrap();
        }
        detect(dir.path())
    }

    #[test]
    fn each_ecosystem_by_its_files() {
        for (files, test, rule) in [
            (&["Cargo.toml"][..], "cargo test", "Bash(cargo test:*)"),
            (&["package.json"], "npm test", "Bash(npm test:*)"),
            (
                &["package.json", "pnpm-lock.yaml"],
                "pnpm test",
                "Bash(pnpm test:*)",
            ),
            (
                &["package.json", "yarn.lock"],
                "yarn test",
                "Bash(yarn test:*)",
            ),
            (&["pyproject.toml"], "pytest", "Bash(pytest:*)"),
            (
                &["pyproject.toml", "uv.lock"],
                "uv run pytest",
                "Bash(uv run pytest:*)",
            ),
            (
                &["pyproject.toml", "poetry.lock"],
                "poetry run pytest",
                "Bash(poetry run pytest:*)",
            ),
            (&["go.mod"], "go test ./...", "Bash(go test:*)"),
            (&["pom.xml"], "mvn -q test", "Bash(mvn -q test:*)"),
            (
                &["build.gradle.kts", "gradlew"],
                "./gradlew test",
                "Bash(./gradlew test:*)",
            ),
            (&["Makefile"], "make test", "Bash(make test:*)"),
        ] {
            let p = detected(files).unwrap_or_else(|| panic!("{files:?}"));
            assert_eq!(p.test, test, "{files:?}");
            assert!(
                p.rules.contains(&rule.to_string()),
                "{files:?}: {:?}",
                p.rules
            );
        }
        assert_eq!(detected(&["README.md"]), None);
    }
}
