//! The commands: `exec`, `validate`, `schema`. The binary calls these and exits with the
//! code they return. This module owns stdout.

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use crate::batch;
use crate::cli::{ExecArgs, OutputFormat};
use crate::events::RunResult;
use crate::outcome::combined_exit_code;
use crate::prepare::{self, Overrides, PreparedTask};
use crate::report::{SharedOut, github, progress};
use crate::session::RunOptions;
use crate::spec::{self, LoadedSpec};

/// Exit code for invalid input (nothing ran).
pub(crate) const EXIT_INVALID: i32 = 2;

fn stdout_writer() -> SharedOut {
    Arc::new(Mutex::new(
        Box::new(std::io::stdout()) as Box<dyn Write + Send>
    ))
}

fn write_out(out: &SharedOut, text: &str) {
    if let Ok(mut w) = out.lock() {
        let r = w.write_all(text.as_bytes()).and_then(|_| w.flush());
        if let Err(e) = r {
            tracing::error!("writing to stdout failed: {e}");
        }
    }
}

/// Load every spec under `paths`; all errors are collected, not just the first.
fn load_all(paths: &[PathBuf]) -> Result<Vec<LoadedSpec>, Vec<String>> {
    let files = spec::discover(paths).map_err(|e| vec![e.to_string()])?;
    let mut loaded = Vec::new();
    let mut errors = Vec::new();
    for f in &files {
        match spec::load_all(f) {
            Ok(l) => loaded.extend(l),
            Err(e) => errors.push(e.to_string()),
        }
    }
    let mut seen: HashMap<String, PathBuf> = HashMap::new();
    for l in &loaded {
        if let Some(prev) = seen.insert(l.spec.name.clone(), l.path.clone()) {
            errors.push(format!(
                "{}:{}:1: task name `{}` is also used by {}; task names must be unique in one run",
                l.path.display(),
                l.name_line,
                l.spec.name,
                prev.display()
            ));
        }
    }
    if errors.is_empty() {
        Ok(loaded)
    } else {
        Err(errors)
    }
}

fn report_errors(errors: &[String]) -> i32 {
    for e in errors {
        tracing::error!("{e}");
    }
    let n = errors.len();
    tracing::error!(
        "{n} error{} found; nothing was run",
        if n == 1 { "" } else { "s" }
    );
    EXIT_INVALID
}

/// `runner validate PATH...`: every check `exec` makes before the first model request,
/// except those that depend on the environment (the provider's API key).
pub fn validate(paths: &[PathBuf]) -> i32 {
    let loaded = match load_all(paths) {
        Ok(l) => l,
        Err(errors) => return report_errors(&errors),
    };
    let outputs = GitOutputs::new(&PathBuf::from(".runner"), None);
    match check_tasks(loaded, &Overrides::default(), &outputs, prepare::check) {
        Ok(tasks) => {
            let out = stdout_writer();
            for t in &tasks {
                write_out(
                    &out,
                    &format!("{}: ok ({})\n", t.loaded.path.display(), t.loaded.spec.name),
                );
            }
            0
        }
        Err(errors) => report_errors(&errors),
    }
}

/// `runner report merge INPUT... -o OUTPUT`.
pub fn report_merge(inputs: &[PathBuf], output: &std::path::Path) -> i32 {
    match crate::report::merge::merge_files(inputs, output) {
        Ok(t) => {
            tracing::info!(
                suites = t.suites,
                tests = t.tests,
                failures = t.failures,
                errors = t.errors,
                skipped = t.skipped,
                output = %output.display(),
                "JUnit reports merged"
            );
            0
        }
        Err(e) => {
            tracing::error!("{e}");
            EXIT_INVALID
        }
    }
}

/// `runner schema`.
pub fn schema() -> i32 {
    write_out(&stdout_writer(), &spec::schema::task_schema_pretty());
    0
}

fn overrides(args: &ExecArgs) -> Overrides {
    Overrides {
        model: args.model.clone(),
        max_turns: args.limits.max_turns,
        max_cost_usd: args.limits.max_cost_usd,
        max_total_tokens: args.limits.max_total_tokens,
        timeout: args.limits.timeout,
        permission_mode: args.permission_mode,
        allowed_tools: args
            .allowed_tools
            .iter()
            .flat_map(|s| crate::cli::split_tool_rules(s))
            .collect(),
        disallowed_tools: args
            .disallowed_tools
            .iter()
            .flat_map(|s| crate::cli::split_tool_rules(s))
            .collect(),
        replay: args.replay.clone(),
        max_retries: args.limits.max_retries,
        settings: args.settings.clone(),
        replay_mode: args.replay_mode,
        sandbox: args.sandbox.mode,
        network: args.sandbox.network.clone(),
    }
}

/// The task continuing `transcript` (`exec --resume TRANSCRIPT [SPEC]`, `runner resume`).
fn resume_task(
    args: &ExecArgs,
    transcript: &std::path::Path,
    o: &Overrides,
) -> Result<PreparedTask, String> {
    if args.paths.len() > 1 {
        return Err(format!(
            "--resume continues one run; give at most one task spec (got {})",
            args.paths.len()
        ));
    }
    let req = prepare::resume::ResumeRequest {
        transcript: transcript.to_path_buf(),
        spec: args.paths.first().cloned(),
        use_current_spec: args.use_current_spec,
        prompt: args.prompt.clone(),
    };
    prepare::resume::prepare_resume(&req, o).map_err(|e| e.to_string())
}

/// Print a finished (or skipped) task's result in the chosen format. A skipped task has no
/// stream-json sink, so its `result` frame is written here.
fn print_result(
    format: OutputFormat,
    out: &SharedOut,
    result: &RunResult,
    multi: bool,
    skipped: bool,
) {
    match format {
        OutputFormat::Text => write_out(out, &crate::report::text::render_text(result, multi)),
        OutputFormat::Json => {
            write_out(
                out,
                &format!("{}\n", crate::report::json::result_value(result)),
            );
        }
        OutputFormat::StreamJson if skipped => {
            let frame = crate::report::json::result_value(result);
            if let Err(e) = crate::report::write_json_line(out, &frame) {
                tracing::error!("writing to stdout failed: {e}");
            }
        }
        OutputFormat::StreamJson => {}
    }
}

/// Where a run's outputs go, which git must leave out of a task's changes.
struct GitOutputs {
    patch_dir: PathBuf,
    dirs: [PathBuf; 2],
}

impl GitOutputs {
    fn new(transcript_dir: &std::path::Path, patch_dir: Option<&std::path::Path>) -> GitOutputs {
        let patch_dir = patch_dir.map_or_else(|| transcript_dir.join("patches"), PathBuf::from);
        GitOutputs {
            dirs: [transcript_dir.to_path_buf(), patch_dir.clone()],
            patch_dir,
        }
    }
}

/// Every task of a `runner exec`, prepared and with its git plan; or every error found (exit
/// 2, nothing runs).
fn prepare_all(args: &ExecArgs) -> Result<Vec<PreparedTask>, Vec<String>> {
    let o = overrides(args);
    let outputs = GitOutputs::new(&args.transcript_dir, args.patch_dir.as_deref());
    let prepared = if let Some(transcript) = &args.resume {
        let task = resume_task(args, transcript, &o).map_err(|e| vec![e])?;
        let mut tasks = vec![task];
        plan_git(&mut tasks, &outputs, false)?;
        tasks
    } else {
        check_tasks(load_all(&args.paths)?, &o, &outputs, prepare::prepare)?
    };
    if args.output_file.is_some() && !prepared.iter().any(|p| p.loaded.spec.output.is_some()) {
        tracing::warn!(
            "--output-file: no task sets `output:`, so the file will hold only null (see README \"Structured output\")"
        );
    }
    if args.record.is_some() && prepared.len() > 1 {
        return Err(vec![
            "--record records one task; give a single task spec".to_string(),
        ]);
    }
    Ok(prepared)
}

/// Prepare each loaded spec with `prepare` (exec: [`prepare::prepare`]; validate:
/// [`prepare::check`]) and plan its git work; every error is collected.
fn check_tasks(
    loaded: Vec<LoadedSpec>,
    o: &Overrides,
    outputs: &GitOutputs,
    prepare: fn(LoadedSpec, &Overrides) -> Result<PreparedTask, prepare::PrepareError>,
) -> Result<Vec<PreparedTask>, Vec<String>> {
    let mut tasks = Vec::new();
    let mut errors = Vec::new();
    let total = loaded.len();
    for l in loaded {
        match prepare(l, o) {
            Ok(p) => tasks.push(p),
            Err(e) => errors.push(e.to_string()),
        }
    }
    if let Err(e) = plan_git(&mut tasks, outputs, total > 1) {
        errors.extend(e);
    }
    if errors.is_empty() {
        Ok(tasks)
    } else {
        Err(errors)
    }
}

/// Plan the git work of `tasks` (one run; `several` when it has more than one task):
/// isolation, patches, branches; a branch may serve only one task.
fn plan_git(
    tasks: &mut [PreparedTask],
    outputs: &GitOutputs,
    several: bool,
) -> Result<(), Vec<String>> {
    let mut errors = Vec::new();
    let mut branches: HashMap<String, String> = HashMap::new();
    let mut planner = crate::git::Planner::default();
    for p in tasks.iter_mut() {
        match planner.plan(&p.loaded, several, &outputs.patch_dir, &outputs.dirs) {
            Ok(g) => p.git = g,
            Err(e) => errors.push(e.to_string()),
        }
        if let Some(b) = &p.git.branch
            && let Some(other) = branches.insert(b.clone(), p.loaded.spec.name.clone())
        {
            errors.push(format!(
                "{}: git.branch `{b}` is also the branch of task `{other}`; each task needs its own",
                p.loaded.path.display()
            ));
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// In GitHub Actions: mask every secret value in the log and stop workflow commands (model and
/// tool text may reach the log from here on); the token resumes them at the end.
fn github_commands(tasks: &[(PreparedTask, Option<String>)]) -> Option<String> {
    let mut values: Vec<String> = tasks
        .iter()
        .flat_map(|(p, _)| prepare::secret_names(&p.loaded))
        .filter_map(|n| std::env::var(n).ok())
        .filter(|v| v.len() >= crate::redact::MIN_SECRET_LEN)
        .collect();
    values.sort();
    values.dedup();
    github::mask_values(&values);
    let token = github::random_token();
    github::stop_commands(&token);
    Some(token)
}

/// `runner exec PATH...`. Returns the exit code.
pub async fn exec(args: ExecArgs) -> i32 {
    let prepared = match prepare_all(&args) {
        Ok(p) => p,
        Err(errors) => return report_errors(&errors),
    };
    let tasks = match batch::plan(prepared, &batch_options(&args)) {
        Ok(p) => p,
        Err(errors) => return report_errors(&errors),
    };
    crate::model::anthropic::install_crypto_provider();
    let github = github::GithubEnv::detect();
    let command_token = github.as_ref().and_then(|_| github_commands(&tasks));
    let out = stdout_writer();
    let multi = tasks.len() > 1;
    let groups =
        command_token.map(|t| Arc::new(batch::group::Groups::new(t, multi && args.jobs > 1)));
    let show_progress = multi && progress::wanted();
    if show_progress {
        progress::start(tasks.len());
    }
    let format = args.output_format;
    let printer = out.clone();
    let schedule = batch::Schedule {
        jobs: args.jobs,
        gate: Arc::new(batch::BatchGate::new(
            args.fail_fast,
            args.max_total_cost_usd,
        )),
        opts: RunOptions {
            transcript_dir: args.transcript_dir.clone(),
            record: args.record.clone(),
            stream_out: (format == OutputFormat::StreamJson).then(|| out.clone()),
            gate: Arc::new(crate::retry::RateGate::new()),
        },
        groups: groups.clone(),
        on_result: Arc::new(move |r, skipped| print_result(format, &printer, r, multi, skipped)),
    };
    let end = batch::run_all(tasks, schedule).await;
    // Tasks cut short still get their result on stdout, in the chosen format.
    for r in end.unfinished.iter().map(|&i| &end.results[i]) {
        let text = match format {
            OutputFormat::Text => crate::report::text::render_text(r, multi),
            OutputFormat::Json | OutputFormat::StreamJson => {
                format!("{}\n", crate::report::json::result_value(r))
            }
        };
        write_out(&out, &text);
    }
    if end.cut_short {
        tracing::warn!(
            "reports written for {} task(s); unfinished tasks are marked interrupted",
            end.results.len()
        );
    }
    write_reports(&args, &end.results);
    if show_progress {
        progress::finish();
    }
    if let (Some(env), Some(groups)) = (&github, &groups) {
        github::resume_commands(&groups.token());
        github::finish(
            env,
            &end.results,
            args.junit.as_deref(),
            &args.transcript_dir,
        );
    }
    for r in &end.results {
        if let Some(t) = &r.transcript_path {
            tracing::info!(task = %r.task_name, outcome = r.outcome.name(), transcript = %t.display(), "result");
        }
    }
    combined_exit_code(end.results.iter().map(|r| r.outcome.exit_code()))
}

/// The batch options of `args`.
fn batch_options(args: &ExecArgs) -> batch::BatchOptions {
    batch::BatchOptions {
        shard: args.shard,
        max_total_cost_usd: args.max_total_cost_usd,
        skip_passed: args.skip_passed.clone(),
    }
}

/// The run's files: the JUnit report and the structured output file.
fn write_reports(args: &ExecArgs, finished: &[RunResult]) {
    if let Some(path) = &args.junit
        && let Err(e) = crate::report::junit::write_junit(path, finished)
    {
        tracing::error!("cannot write the JUnit report {}: {e}", path.display());
    }
    if let Some(path) = &args.output_file
        && let Err(e) = crate::report::structured::write_output_file(path, finished)
    {
        tracing::error!("cannot write the output file {}: {e}", path.display());
    }
}
