//! Files other tools execute later: hook managers, version and environment managers,
//! package-manager hooks, editor and CI configurations that run code. A write there is code
//! that runs outside the task's decision (at the next commit, `cd`, install, editor start or
//! CI run), so they are protected paths: no tool call writes them unless an allow rule names
//! the path (`Edit(./mise.toml)`), in every mode. [`crate::paths`] checks them with the rest
//! of the protected paths.

/// One kind of auto-executed file: the names (files at any depth) or directories (a path with
/// this component sequence) and the tool that runs what they say.
pub struct AutoExecuted {
    /// File names, matched at any depth without case.
    pub files: &'static [&'static str],
    /// Directory component sequences; everything below them is covered.
    pub dirs: &'static [&'static [&'static str]],
    /// Which tool runs the code they hold, and when.
    pub runs: &'static str,
}

/// The auto-executed files, by the tool that runs them (documented in permissions.md).
pub const TABLE: &[AutoExecuted] = &[
    AutoExecuted {
        files: &[],
        dirs: &[&[".husky"]],
        runs: "husky: git hooks",
    },
    AutoExecuted {
        files: &[
            ".huskyrc",
            ".huskyrc.json",
            ".huskyrc.js",
            ".huskyrc.cjs",
            "husky.config.js",
            "husky.config.cjs",
        ],
        dirs: &[],
        runs: "husky (v4): git hooks",
    },
    AutoExecuted {
        files: &[
            "lefthook.yml",
            "lefthook.yaml",
            "lefthook.json",
            "lefthook.jsonc",
            "lefthook.toml",
            ".lefthook.yml",
            ".lefthook.yaml",
            ".lefthook.json",
            ".lefthook.jsonc",
            ".lefthook.toml",
            "lefthook-local.yml",
            "lefthook-local.yaml",
            "lefthook-local.json",
            "lefthook-local.toml",
            ".lefthook-local.yml",
            ".lefthook-local.yaml",
            ".lefthook-local.json",
            ".lefthook-local.toml",
        ],
        dirs: &[&[".lefthook"]],
        runs: "lefthook: git hooks",
    },
    AutoExecuted {
        files: &[
            ".pre-commit-config.yaml",
            ".pre-commit-config.yml",
            ".pre-commit-hooks.yaml",
        ],
        dirs: &[],
        runs: "pre-commit: git hooks",
    },
    AutoExecuted {
        files: &[
            ".simple-git-hooks.json",
            ".simple-git-hooks.js",
            ".simple-git-hooks.cjs",
            ".simple-git-hooks.mjs",
            "simple-git-hooks.json",
            "simple-git-hooks.js",
            "simple-git-hooks.cjs",
            "simple-git-hooks.mjs",
        ],
        dirs: &[],
        runs: "simple-git-hooks: git hooks",
    },
    AutoExecuted {
        files: &[
            ".lintstagedrc",
            ".lintstagedrc.json",
            ".lintstagedrc.yaml",
            ".lintstagedrc.yml",
            ".lintstagedrc.js",
            ".lintstagedrc.cjs",
            ".lintstagedrc.mjs",
            "lint-staged.config.js",
            "lint-staged.config.cjs",
            "lint-staged.config.mjs",
        ],
        dirs: &[],
        runs: "lint-staged: commands in git hooks",
    },
    AutoExecuted {
        files: &[".overcommit.yml"],
        dirs: &[&[".githooks"], &[".git-hooks"]],
        runs: "overcommit and hook directories: git hooks",
    },
    AutoExecuted {
        files: &[
            "mise.toml",
            ".mise.toml",
            "mise.local.toml",
            ".mise.local.toml",
            ".rtx.toml",
            ".tool-versions",
        ],
        dirs: &[&[".mise"], &[".config", "mise"]],
        runs: "mise and asdf: tasks, hooks and tool paths when a shell enters the directory",
    },
    AutoExecuted {
        files: &[".envrc", ".env.mise"],
        dirs: &[],
        runs: "direnv: shell code when a shell enters the directory",
    },
    AutoExecuted {
        files: &["rust-toolchain", "rust-toolchain.toml"],
        dirs: &[&[".cargo"]],
        runs: "rustup and cargo: a toolchain path, runners and build wrappers",
    },
    AutoExecuted {
        files: &["devbox.json", ".gitpod.yml"],
        dirs: &[],
        runs: "devbox and Gitpod: init hooks",
    },
    AutoExecuted {
        files: &[
            ".pnpmfile.cjs",
            ".pnpmfile.mjs",
            ".npmrc",
            ".yarnrc",
            ".yarnrc.yml",
            ".pnp.cjs",
            "bunfig.toml",
        ],
        dirs: &[&[".yarn"]],
        runs: "npm, pnpm, yarn, bun: install hooks, script shells, preloads and plugins",
    },
    AutoExecuted {
        files: &[".devcontainer.json"],
        dirs: &[&[".vscode"], &[".devcontainer"], &[".idea"], &[".zed"]],
        runs: "editors and dev containers: tasks, launch configurations and lifecycle commands",
    },
    AutoExecuted {
        files: &[
            ".gitlab-ci.yml",
            ".gitlab-ci.yaml",
            "Jenkinsfile",
            "azure-pipelines.yml",
            "azure-pipelines.yaml",
            ".azure-pipelines.yml",
            ".travis.yml",
            "bitbucket-pipelines.yml",
            ".drone.yml",
            ".woodpecker.yml",
            ".woodpecker.yaml",
            "appveyor.yml",
            ".appveyor.yml",
            ".cirrus.yml",
            "cloudbuild.yaml",
            "cloudbuild.yml",
            "codemagic.yaml",
            "buildspec.yml",
        ],
        dirs: &[
            &[".github", "workflows"],
            &[".github", "actions"],
            &[".gitea", "workflows"],
            &[".gitea", "actions"],
            &[".forgejo", "workflows"],
            &[".forgejo", "actions"],
            &[".gitlab"],
            &[".circleci"],
            &[".buildkite"],
            &[".woodpecker"],
            &[".semaphore"],
            &[".tekton"],
            &[".azure-pipelines"],
        ],
        runs: "CI services: pipeline steps",
    },
];

/// Every auto-executed file name in [`TABLE`].
pub fn files() -> impl Iterator<Item = &'static str> {
    TABLE.iter().flat_map(|k| k.files.iter().copied())
}

/// Every auto-executed directory in [`TABLE`].
pub fn dirs() -> impl Iterator<Item = &'static [&'static str]> {
    TABLE.iter().flat_map(|k| k.dirs.iter().copied())
}
