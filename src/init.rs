//! `runner init`: start a repository off with a commented task spec, `.runner/` in
//! `.gitignore`, and (with `--workflow`) a GitHub workflow that runs the specs.
//!
//! Nothing existing is ever overwritten: every file to be created is checked first, and one
//! that exists stops the command before anything is written (exit 2, naming the file).
//! `.gitignore` is the one file that may already exist; it only ever gets a line appended.

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use clap::Args;

use crate::spec::validate::name_problem;

mod detect;
mod templates;

/// Exit code when nothing could be done (a file exists, a bad name, an unwritable path).
const EXIT_INVALID: i32 = 2;

/// Where editors fetch the task spec JSON Schema from: the file attached to the latest
/// release, so the `# yaml-language-server: $schema=…` line works in any repository.
pub(crate) const SCHEMA_URL: &str = concat!(
    env!("CARGO_PKG_REPOSITORY"),
    "/releases/latest/download/task.schema.json"
);

/// The action's `owner/name` on GitHub: the package's `repository` without the host.
fn action_repository() -> &'static str {
    let url = env!("CARGO_PKG_REPOSITORY");
    url.strip_prefix("https://github.com/").unwrap_or(url)
}

/// The line `runner init` adds to `.gitignore`: runner's default output directory.
const GITIGNORE_LINE: &str = ".runner/";

/// Where `--workflow` writes the example workflow, relative to the directory.
const WORKFLOW_PATH: &str = ".github/workflows/runner.yml";

/// `runner init` arguments.
#[derive(Debug, Args)]
pub struct InitArgs {
    /// Name of the task: the spec is written to `tasks/NAME.yaml` (letters, digits, `-`, `_`,
    /// `.`). `fix-tests`, `fix-lint`, `review` and `docs` get a spec that does that job with
    /// the project's own test and lint commands (detected: cargo, npm/pnpm/yarn,
    /// pytest/uv/poetry, go, maven/gradle, make); any other name the read-only starter.
    /// Default `first-task`, or none with --workflow when `tasks/` already holds specs.
    #[arg(value_name = "NAME")]
    pub name: Option<String>,
    /// Also write an example GitHub workflow (`.github/workflows/runner.yml`) that runs every
    /// spec in `tasks/` on pull requests; alone, in a repository whose `tasks/` holds specs,
    /// only the workflow.
    #[arg(long)]
    pub workflow: bool,
    /// Where the model runs: `anthropic` (the API, `ANTHROPIC_API_KEY`), `bedrock` (Amazon
    /// Bedrock) or `vertex` (Google Vertex AI). The spec gets `provider:`, the workflow the
    /// cloud's OIDC sign-in instead of an API key secret.
    #[arg(long, value_enum, default_value_t = InitProvider::Anthropic)]
    pub provider: InitProvider,
}

/// The providers `runner init --provider` sets a repository up for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum InitProvider {
    /// The Anthropic API with `ANTHROPIC_API_KEY`.
    Anthropic,
    /// Amazon Bedrock with AWS credentials (OIDC in the workflow).
    Bedrock,
    /// Google Vertex AI with Application Default Credentials (OIDC in the workflow).
    Vertex,
}

impl InitProvider {
    /// What a run of the spec needs from the environment.
    pub(crate) fn needs(self) -> &'static str {
        match self {
            InitProvider::Anthropic => "ANTHROPIC_API_KEY",
            InitProvider::Bedrock => "AWS credentials and AWS_REGION",
            InitProvider::Vertex => "Google credentials and ANTHROPIC_VERTEX_PROJECT_ID",
        }
    }

    /// The spec's `provider:` line (none for the default).
    pub(crate) fn spec_line(self) -> &'static str {
        match self {
            InitProvider::Anthropic => "",
            InitProvider::Bedrock => {
                "provider: bedrock                 # AWS credentials from the standard chain, region from AWS_REGION\n"
            }
            InitProvider::Vertex => {
                "provider: vertex                  # Application Default Credentials, project from ANTHROPIC_VERTEX_PROJECT_ID\n"
            }
        }
    }
}

/// Why `runner init` stopped.
#[derive(Debug, thiserror::Error)]
pub enum InitError {
    /// The task name is not a valid task name.
    #[error("invalid task name: {0}")]
    Name(String),
    /// A file `init` would create exists already.
    #[error("{} already exists; runner init never overwrites a file (remove it, or pick another name)", .0.display())]
    Exists(PathBuf),
    /// Reading or writing a file failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What the system said.
        source: io::Error,
    },
}

/// What `init` did to one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// The file was created.
    Created(PathBuf),
    /// A line was appended to the existing file (or the file was created with it).
    Appended(PathBuf, &'static str),
    /// The file already held what `init` would add.
    Unchanged(PathBuf),
}

/// `runner init [NAME] [--workflow]`: set up the current directory, report on stderr, return
/// the exit code (0, or 2 with nothing overwritten).
pub fn run(args: &InitArgs) -> i32 {
    // An empty base keeps the reported paths relative (`tasks/x.yaml`, not `./tasks/x.yaml`).
    let base = Path::new("");
    let name = match &args.name {
        Some(n) => Some(n.as_str()),
        // `runner init --workflow` in a repository already set up: the workflow alone.
        None if args.workflow && has_specs(&base.join("tasks")) => None,
        None => Some(DEFAULT_NAME),
    };
    match init(base, name, args.workflow, args.provider) {
        Ok(changes) => {
            let spec = match name {
                Some(n) => Path::new("tasks").join(format!("{n}.yaml")),
                None => PathBuf::from("tasks/"),
            };
            let _ = report(&mut io::stderr().lock(), &changes, &spec, args.provider);
            0
        }
        Err(e) => {
            let _ = writeln!(io::stderr(), "error: {e}");
            EXIT_INVALID
        }
    }
}

/// The task name when none is given.
const DEFAULT_NAME: &str = "first-task";

/// Whether `dir` holds a task spec (`*.yaml` or `*.yml`).
fn has_specs(dir: &Path) -> bool {
    fs::read_dir(dir).is_ok_and(|entries| {
        entries.flatten().any(|e| {
            e.path()
                .extension()
                .is_some_and(|x| x == "yaml" || x == "yml")
        })
    })
}

/// Create the spec of task `name` (none: the workflow alone) and the workflow for `provider`,
/// and add `.runner/` to `.gitignore`, under `dir`. Every file to create is checked first: if
/// one exists, nothing is written.
pub fn init(
    dir: &Path,
    name: Option<&str>,
    workflow: bool,
    provider: InitProvider,
) -> Result<Vec<Change>, InitError> {
    let mut files: Vec<(PathBuf, String)> = Vec::new();
    if let Some(name) = name {
        if let Some(why) = name_problem(name) {
            return Err(InitError::Name(why));
        }
        let spec_rel = Path::new("tasks").join(format!("{name}.yaml"));
        files.push((spec_rel, starter_spec(dir, name, provider)));
    }
    if workflow {
        files.push((PathBuf::from(WORKFLOW_PATH), workflow_text(provider)));
    }
    for (rel, _) in &files {
        let path = dir.join(rel);
        if path.symlink_metadata().is_ok() {
            return Err(InitError::Exists(path));
        }
    }
    let mut changes = Vec::new();
    for (rel, text) in &files {
        let path = dir.join(rel);
        create_new(&path, text)?;
        changes.push(Change::Created(path));
    }
    changes.push(add_gitignore_line(&dir.join(".gitignore"), GITIGNORE_LINE)?);
    Ok(changes)
}

/// Write `text` to a new file at `path` (creating parent directories); an existing file is
/// [`InitError::Exists`], never replaced.
fn create_new(path: &Path, text: &str) -> Result<(), InitError> {
    let io_err = |source| InitError::Io {
        path: path.to_path_buf(),
        source,
    };
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).map_err(|source| InitError::Io {
            path: parent.to_path_buf(),
            source,
        })?;
    }
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| match e.kind() {
            io::ErrorKind::AlreadyExists => InitError::Exists(path.to_path_buf()),
            _ => io_err(e),
        })?;
    file.write_all(text.as_bytes()).map_err(io_err)
}

/// Append `line` to the ignore file at `path` unless a line already ignores the same
/// directory (`.runner`, `.runner/`, `/.runner`, `/.runner/`); create the file if missing.
fn add_gitignore_line(path: &Path, line: &'static str) -> Result<Change, InitError> {
    let io_err = |source| InitError::Io {
        path: path.to_path_buf(),
        source,
    };
    let existing = match fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(io_err(e)),
    };
    let wanted = line.trim_matches('/');
    let present = String::from_utf8_lossy(&existing)
        .lines()
        .any(|l| l.trim().trim_matches('/') == wanted);
    if present {
        return Ok(Change::Unchanged(path.to_path_buf()));
    }
    let mut file = OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .map_err(io_err)?;
    let mut text = String::new();
    if !existing.is_empty() && !existing.ends_with(b"\n") {
        text.push('\n');
    }
    text.push_str(line);
    text.push('\n');
    file.write_all(text.as_bytes()).map_err(io_err)?;
    Ok(Change::Appended(path.to_path_buf(), line))
}

/// Tell the user what was written and what to do next.
fn report(
    w: &mut impl Write,
    changes: &[Change],
    spec: &Path,
    provider: InitProvider,
) -> io::Result<()> {
    for c in changes {
        match c {
            Change::Created(p) => writeln!(w, "     Created {}", p.display())?,
            Change::Appended(p, line) => {
                writeln!(w, "     Updated {} (added {line})", p.display())?
            }
            Change::Unchanged(p) => writeln!(w, "   Unchanged {}", p.display())?,
        }
    }
    let spec = spec.display();
    writeln!(w)?;
    writeln!(w, "Next:")?;
    writeln!(w, "  runner validate {spec}      check the spec")?;
    writeln!(
        w,
        "  runner exec {spec}          run it (needs {})",
        provider.needs()
    )
}

/// The spec of task `name` for the project at `dir`: a job template, or the read-only starter;
/// valid as written, every common field shown.
fn starter_spec(dir: &Path, name: &str, provider: InitProvider) -> String {
    let project = detect::detect(if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    });
    templates::spec_for(name, project.as_ref(), SCHEMA_URL, provider)
}

/// The example workflow for `provider`, pinned to the release of this runner.
fn workflow_text(provider: InitProvider) -> String {
    let text = match provider {
        InitProvider::Anthropic => WORKFLOW,
        InitProvider::Bedrock => WORKFLOW_BEDROCK,
        InitProvider::Vertex => WORKFLOW_VERTEX,
    };
    text.replace("{repository}", action_repository())
        .replace("{version}", crate::VERSION)
}

/// The example workflow: run every spec in `tasks/` on pull requests, publish the JUnit
/// report, keep the transcripts.
const WORKFLOW: &str = r#"# Runs every task spec in tasks/ on each pull request with runner, then keeps the JUnit
# report and the transcripts as artifacts. Needs the repository secret ANTHROPIC_API_KEY.
name: runner
on:
  pull_request:
permissions:
  contents: read
jobs:
  tasks:
    runs-on: ubuntu-latest
    timeout-minutes: 30
    steps:
      - uses: actions/checkout@v4
      - id: runner
        uses: {repository}@v{version}
        env:
          ANTHROPIC_API_KEY: ${{ secrets.ANTHROPIC_API_KEY }}
        with:
          tasks: tasks/
          junit: runner-junit.xml
      - name: Keep the report and transcripts
        if: always()
        uses: actions/upload-artifact@v4
        with:
          name: runner
          path: |
            runner-junit.xml
            .runner/
"#;

/// The example workflow for Amazon Bedrock: GitHub's OIDC token exchanged for a role's
/// credentials by `aws-actions/configure-aws-credentials`; no secret.
const WORKFLOW_BEDROCK: &str = r#"# Runs every task spec in tasks/ on each pull request with runner on Amazon Bedrock, then keeps
# the JUnit report and the transcripts as artifacts. No secret: GitHub's OIDC token is exchanged
# for the credentials of an IAM role whose trust policy admits this repository
# (token.actions.githubusercontent.com, sub repo:OWNER/REPO:*) and which may call
# bedrock:InvokeModelWithResponseStream. Set the repository variables AWS_ROLE_ARN and
# AWS_REGION (Settings > Secrets and variables > Actions > Variables).
name: runner
on:
  pull_request:
permissions:
  contents: read
  id-token: write
jobs:
  tasks:
    runs-on: ubuntu-latest
    timeout-minutes: 30
    steps:
      - uses: actions/checkout@v4
      - uses: aws-actions/configure-aws-credentials@v4
        with:
          role-to-assume: ${{ vars.AWS_ROLE_ARN }}
          aws-region: ${{ vars.AWS_REGION }}
      - id: runner
        uses: {repository}@v{version}
        with:
          tasks: tasks/
          junit: runner-junit.xml
      - name: Keep the report and transcripts
        if: always()
        uses: actions/upload-artifact@v4
        with:
          name: runner
          path: |
            runner-junit.xml
            .runner/
"#;

/// The example workflow for Google Vertex AI: GitHub's OIDC token exchanged through workload
/// identity federation by `google-github-actions/auth`; no secret.
const WORKFLOW_VERTEX: &str = r#"# Runs every task spec in tasks/ on each pull request with runner on Google Vertex AI, then
# keeps the JUnit report and the transcripts as artifacts. No secret: GitHub's OIDC token is
# exchanged through a workload identity pool and provider that trust this repository, for a
# service account with roles/aiplatform.user on the project. Set the repository variables
# GCP_WORKLOAD_IDENTITY_PROVIDER (projects/NUMBER/locations/global/workloadIdentityPools/POOL/
# providers/PROVIDER), GCP_SERVICE_ACCOUNT, GCP_PROJECT and CLOUD_ML_REGION (us-east5,
# europe-west1, or global).
name: runner
on:
  pull_request:
permissions:
  contents: read
  id-token: write
jobs:
  tasks:
    runs-on: ubuntu-latest
    timeout-minutes: 30
    steps:
      - uses: actions/checkout@v4
      - uses: google-github-actions/auth@v2
        with:
          workload_identity_provider: ${{ vars.GCP_WORKLOAD_IDENTITY_PROVIDER }}
          service_account: ${{ vars.GCP_SERVICE_ACCOUNT }}
      - id: runner
        uses: {repository}@v{version}
        env:
          ANTHROPIC_VERTEX_PROJECT_ID: ${{ vars.GCP_PROJECT }}
          CLOUD_ML_REGION: ${{ vars.CLOUD_ML_REGION }}
        with:
          tasks: tasks/
          junit: runner-junit.xml
      - name: Keep the report and transcripts
        if: always()
        uses: actions/upload-artifact@v4
        with:
          name: runner
          path: |
            runner-junit.xml
            .runner/
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gitignore_line_added_once_with_a_newline_before_it() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(".gitignore");
        fs::write(&p, "target").unwrap();
        assert_eq!(
            add_gitignore_line(&p, GITIGNORE_LINE).unwrap(),
            Change::Appended(p.clone(), GITIGNORE_LINE)
        );
        assert_eq!(fs::read_to_string(&p).unwrap(), "target\n.runner/\n");
        assert_eq!(
            add_gitignore_line(&p, GITIGNORE_LINE).unwrap(),
            Change::Unchanged(p.clone())
        );
        assert_eq!(fs::read_to_string(&p).unwrap(), "target\n.runner/\n");
    }

    #[test]
    fn gitignore_equivalent_spellings_count_as_present() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(".gitignore");
        for existing in ["/.runner\n", ".runner\n", "  /.runner/  \n"] {
            fs::write(&p, existing).unwrap();
            assert_eq!(
                add_gitignore_line(&p, GITIGNORE_LINE).unwrap(),
                Change::Unchanged(p.clone()),
                "{existing:?}"
            );
        }
        fs::write(&p, ".runner-old/\n").unwrap();
        assert!(matches!(
            add_gitignore_line(&p, GITIGNORE_LINE).unwrap(),
            Change::Appended(..)
        ));
    }

    #[test]
    fn starter_spec_names_the_task_and_the_schema() {
        let s = starter_spec(Path::new("."), "nightly.docs", InitProvider::Anthropic);
        assert!(s.starts_with(&format!("# yaml-language-server: $schema={SCHEMA_URL}\n")));
        assert!(s.contains("\nname: nightly.docs\n"));
        assert!(s.contains("runner exec tasks/nightly.docs.yaml"));
        assert!(!s.contains("{name}") && !s.contains("{schema_url}"));
    }

    #[test]
    fn a_bad_name_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let e = init(dir.path(), Some("a b"), true, InitProvider::Bedrock).unwrap_err();
        assert!(matches!(e, InitError::Name(_)), "{e}");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
