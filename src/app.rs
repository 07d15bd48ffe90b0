//! The commands: `exec`, `validate`, `schema`. The binary calls these and exits with the
//! code they return. This module owns stdout.

mod continue_hint;
mod sessions;

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
use crate::spec::{self, LoadedSpec, SpecError};

/// Exit code for invalid input (nothing ran).
pub(crate) const EXIT_INVALID: i32 = 2;

/// The exit code when every task succeeded but a report could not be written.
const EXIT_REPORT_FAILED: i32 = 1;

/// Why a run cannot start (exit 2, nothing runs): a spec error, shown with its source line, or
/// another problem (a flag, a key, git, a path).
#[derive(Debug)]
enum Problem {
    /// A spec error (positioned, perhaps with a suggestion).
    Spec(Box<SpecError>),
    /// Anything else, as one message.
    Other(String),
}

impl From<SpecError> for Problem {
    fn from(e: SpecError) -> Problem {
        Problem::Spec(Box::new(e))
    }
}

impl From<String> for Problem {
    fn from(e: String) -> Problem {
        Problem::Other(e)
    }
}

impl From<prepare::PrepareError> for Problem {
    fn from(e: prepare::PrepareError) -> Problem {
        match e {
            prepare::PrepareError::Spec(e) => e.into(),
            other => Problem::Other(other.to_string()),
        }
    }
}

impl From<crate::git::GitError> for Problem {
    fn from(e: crate::git::GitError) -> Problem {
        match e {
            crate::git::GitError::Spec(e) => e.into(),
            other => Problem::Other(other.to_string()),
        }
    }
}

/// Everything wrong with the input, collected (not just the first problem).
type Problems = Vec<Problem>;

fn stdout_writer() -> SharedOut {
    Arc::new(Mutex::new(
        Box::new(progress::Stdout::new()) as Box<dyn Write + Send>
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
fn load_all(paths: &[PathBuf]) -> Result<Vec<LoadedSpec>, Problems> {
    let files = spec::discover(paths).map_err(|e| vec![e.into()])?;
    let mut loaded = Vec::new();
    let mut errors: Problems = Vec::new();
    for f in &files {
        match spec::load_all(f) {
            Ok(l) => loaded.extend(l),
            Err(e) => errors.push(e.into()),
        }
    }
    errors.extend(duplicate_names(&loaded));
    if errors.is_empty() {
        Ok(loaded)
    } else {
        Err(errors)
    }
}

/// A task name used by more than one of `loaded`: an error at each later use.
fn duplicate_names<'a>(loaded: impl IntoIterator<Item = &'a LoadedSpec>) -> Problems {
    let mut errors: Problems = Vec::new();
    let mut seen: HashMap<String, PathBuf> = HashMap::new();
    for l in loaded {
        if let Some(prev) = seen.insert(l.spec.name.clone(), l.path.clone()) {
            errors.push(
                SpecError::at(
                    l,
                    "name",
                    format!(
                        "task name `{}` is also used by {}; task names must be unique in one run",
                        l.spec.name,
                        prev.display()
                    ),
                )
                .into(),
            );
        }
    }
    errors
}

/// Report why nothing runs, and return exit code 2. Spec errors are shown as a compiler shows
/// them (the source line, a caret under the token, a suggestion); with `RUNNER_LOG_FORMAT=json`
/// each is one JSON log event instead.
fn report_errors(errors: &[Problem]) -> i32 {
    let json = crate::log::format() == crate::log::LogFormat::Json;
    let color = std::io::IsTerminal::is_terminal(&std::io::stderr())
        && std::env::var_os("NO_COLOR").is_none();
    for e in errors {
        match e {
            Problem::Spec(e) if json => tracing::error!(
                file = %e.file.display(),
                line = e.line.unwrap_or(0),
                column = e.column.unwrap_or(0),
                flag = e.flag().unwrap_or(""),
                help = e.help().unwrap_or(""),
                "{}",
                e.message
            ),
            Problem::Spec(e) => {
                // Dropped if stderr cannot take it, like every log line.
                let _ = crate::log::write_log(e.render(color).as_bytes());
            }
            Problem::Other(e) => tracing::error!("{e}"),
        }
    }
    let n = errors.len();
    let mut files: Vec<&std::path::Path> = errors
        .iter()
        .filter_map(|e| match e {
            Problem::Spec(e) => Some(e.file.as_path()),
            Problem::Other(_) => None,
        })
        .collect();
    files.sort();
    files.dedup();
    let in_files = match files.len() {
        0 => String::new(),
        1 => " in 1 file".to_string(),
        f => format!(" in {f} files"),
    };
    tracing::error!(
        "{n} error{} found{in_files}; nothing was run",
        if n == 1 { "" } else { "s" }
    );
    EXIT_INVALID
}

/// `runner validate PATH...`: every check `exec` makes before the first model request,
/// except those that depend on the environment (the provider's API key).
/// Every problem of every file is reported: a file that does not load does not hide the
/// checks of the others.
pub fn validate(paths: &[PathBuf]) -> i32 {
    let files = match spec::discover(paths) {
        Ok(f) => f,
        Err(e) => return report_errors(&[e.into()]),
    };
    let mut errors: Problems = Vec::new();
    let mut clean = Vec::new();
    let mut faulty = Vec::new();
    for f in &files {
        match spec::load::load_all_reporting(f) {
            Ok(tasks) => {
                for (l, mut errs) in tasks {
                    errs.extend(prepare::tool_errors(&l));
                    errs.extend(prepare::rules::errors(&l));
                    if errs.is_empty() {
                        clean.push(l);
                    } else {
                        errors.extend(errs.into_iter().map(Problem::from));
                        faulty.push(l);
                    }
                }
            }
            Err(errs) => errors.extend(errs.into_iter().map(Problem::from)),
        }
    }
    errors.extend(duplicate_names(clean.iter().chain(&faulty)));
    let outputs = GitOutputs::new(&PathBuf::from(".runner"), None);
    let checked = match check_tasks(clean, &Overrides::default(), &outputs, prepare::check) {
        Ok(tasks) => tasks,
        Err(e) => {
            errors.extend(e);
            Vec::new()
        }
    };
    // File by file, line by line.
    errors.sort_by(|a, b| match (a, b) {
        (Problem::Spec(a), Problem::Spec(b)) => (&a.file, a.line).cmp(&(&b.file, b.line)),
        (Problem::Other(_), Problem::Spec(_)) => std::cmp::Ordering::Less,
        (Problem::Spec(_), Problem::Other(_)) => std::cmp::Ordering::Greater,
        _ => std::cmp::Ordering::Equal,
    });
    match checked {
        _ if !errors.is_empty() => report_errors(&errors),
        tasks => {
            let out = stdout_writer();
            for t in &tasks {
                write_out(
                    &out,
                    &format!("{}: ok ({})\n", t.loaded.path.display(), t.loaded.spec.name),
                );
            }
            0
        }
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
        permission_mode: args.permission_mode.or(args
            .dangerously_skip_permissions
            .then_some(crate::spec::PermissionMode::BypassPermissions)),
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
        system_prompt: args.system_prompt.clone(),
        system_prompt_append: args.append_system_prompt.clone(),
        git_base: args.base,
        provider: args.provider,
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

/// Print a finished (or skipped, or not started) task's result in the chosen format. A task
/// that did not run has no stream-json sink, so its `result` frame is written here.
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

/// The tasks of `exec -p PROMPT` (one, built from the flags) or of the spec PATHs.
fn load_tasks(args: &ExecArgs) -> Result<Vec<LoadedSpec>, Problems> {
    let Some(mut inline) = args.inline_task() else {
        return load_all(&args.paths);
    };
    if inline.provider.is_none() {
        let is_set = |v: &str| std::env::var_os(v).is_some_and(|x| !x.is_empty());
        if let Some((p, why)) = spec::inline::infer_provider(args.model.as_deref(), is_set) {
            tracing::info!(
                "provider {} (from {why}; --provider chooses another)",
                p.as_str()
            );
            inline.provider = Some(p);
        }
    }
    if inline.provider == Some(spec::ProviderKind::Openai) && args.model.is_none() {
        return Err(vec![Problem::Other(
            "--provider openai needs --model (e.g. --model gpt-4o); the default model is Anthropic's"
                .to_string(),
        )]);
    }
    if let Some(file) = &args.mcp_config {
        inline.mcp_servers =
            spec::mcp_config::read(file).map_err(|e| vec![Problem::Other(e.to_string())])?;
    }
    if !args.paths.is_empty() {
        return Err(vec![Problem::Other(format!(
            "-p/--prompt runs one task built from the flags; it takes no spec PATH (got {}). \
             Drop -p to run the specs, or the PATHs to run the prompt",
            args.paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(" ")
        ))]);
    }
    let cwd = std::env::current_dir().map_err(|e| {
        vec![Problem::Other(format!(
            "cannot read the current directory: {e}"
        ))]
    })?;
    inline
        .load(&cwd)
        .map(|l| vec![l])
        .map_err(|e| vec![e.into()])
}

/// Every task of a `runner exec`, prepared and with its git plan, and every output path checked
/// writable; or every error found (exit 2, nothing runs). A resumed runner run writes where
/// the run wrote, whatever the current directory: `args.transcript_dir` becomes the run's.
fn prepare_all(args: &mut ExecArgs) -> Result<Vec<PreparedTask>, Problems> {
    let o = overrides(args);
    let flag_errors = prepare::check_overrides(&o);
    if !flag_errors.is_empty() {
        return Err(flag_errors.into_iter().map(Problem::Other).collect());
    }
    let prepared = if let Some(transcript) = args.resume.clone() {
        let mut task = resume_task(args, &transcript, &o).map_err(|e| vec![e.into()])?;
        let resume = task.resume.as_deref();
        if let Some(dir) = resume.and_then(|r| r.transcript_dir.clone()) {
            args.transcript_dir = dir;
        }
        match resume.and_then(|r| r.git_base.clone()) {
            // The base, worktree and patch directory the run recorded when it started.
            Some(base) => {
                task.git = crate::git::resumed_plan(&task.loaded, base, args.patch_dir.as_deref())
            }
            None => {
                let outputs = GitOutputs::new(&args.transcript_dir, args.patch_dir.as_deref());
                plan_git(std::slice::from_mut(&mut task), &outputs, false)?;
            }
        }
        vec![task]
    } else {
        let outputs = GitOutputs::new(&args.transcript_dir, args.patch_dir.as_deref());
        check_tasks(load_tasks(args)?, &o, &outputs, prepare::prepare)?
    };
    let outputs = GitOutputs::new(&args.transcript_dir, args.patch_dir.as_deref());
    if args.output_file.is_some() && !prepared.iter().any(|p| p.loaded.spec.output.is_some()) {
        tracing::warn!(
            "--output-file: no task sets `output:`, so the file will hold only null (see the book's \"Structured output\")"
        );
    }
    if args.record.is_some() && prepared.len() > 1 {
        return Err(vec![Problem::Other(
            "--record records one task; give a single task spec".to_string(),
        )]);
    }
    let unwritable = check_output_paths(args, &outputs);
    if !unwritable.is_empty() {
        return Err(unwritable.into_iter().map(Problem::Other).collect());
    }
    Ok(prepared)
}

/// Every output path of the run that cannot be written (see [`crate::report::preflight`]).
fn check_output_paths(args: &ExecArgs, outputs: &GitOutputs) -> Vec<String> {
    use crate::report::preflight::{OutputPaths, check};
    let mut paths = OutputPaths {
        dirs: vec![("--transcript-dir", args.transcript_dir.as_path())],
        ..Default::default()
    };
    if outputs.patch_dir != args.transcript_dir.join("patches") {
        paths
            .dirs
            .push(("--patch-dir", outputs.patch_dir.as_path()));
    }
    if let Some(j) = &args.junit {
        paths.replaced.push(("--junit", j.as_path()));
    }
    if let Some(f) = &args.output_file {
        paths.written.push(("--output-file", f.as_path()));
    }
    if let Some(r) = &args.record {
        paths.written.push(("--record", r.as_path()));
    }
    check(&paths)
}

/// Prepare each loaded spec with `prepare` (exec: [`prepare::prepare`]; validate:
/// [`prepare::check`]) and plan its git work; every error is collected.
fn check_tasks(
    loaded: Vec<LoadedSpec>,
    o: &Overrides,
    outputs: &GitOutputs,
    prepare: fn(LoadedSpec, &Overrides) -> Result<PreparedTask, prepare::PrepareError>,
) -> Result<Vec<PreparedTask>, Problems> {
    let mut tasks = Vec::new();
    let mut errors: Problems = Vec::new();
    let total = loaded.len();
    for l in loaded {
        match prepare(l, o) {
            Ok(p) => tasks.push(p),
            Err(e) => errors.push(e.into()),
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
) -> Result<(), Problems> {
    let mut errors: Problems = Vec::new();
    let mut branches: HashMap<String, String> = HashMap::new();
    let mut planner = crate::git::Planner::default();
    // The batch's own spec files are read from disk, not from a worktree: their uncommitted
    // changes are a warning, not a dirty tree.
    planner.tolerate(tasks.iter().map(|p| p.loaded.path.clone()));
    let mut dirty_said: Vec<String> = Vec::new();
    for p in tasks.iter_mut() {
        match planner.plan(&p.loaded, several, &outputs.patch_dir, &outputs.dirs) {
            Ok(g) => p.git = g,
            // A dirty working tree is said once per repository, not once per spec.
            Err(crate::git::GitError::Dirty { repo, .. }) if dirty_said.contains(&repo) => {}
            Err(e) => {
                if let crate::git::GitError::Dirty { repo, .. } = &e {
                    dirty_said.push(repo.clone());
                }
                errors.push(e.into())
            }
        }
        if let Some(b) = &p.git.branch
            && let Some(other) = branches.insert(b.clone(), p.loaded.spec.name.clone())
        {
            errors.push(
                SpecError::at(
                    &p.loaded,
                    "git.branch",
                    format!(
                        "git.branch `{b}` is also the branch of task `{other}`; each task needs its own"
                    ),
                )
                .into(),
            );
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
pub async fn exec(mut args: ExecArgs) -> i32 {
    // A checkout credential an earlier run here hid and never put back goes back first.
    crate::git::credential::restore_left(&args.transcript_dir);
    if let Err(e) = resolve_inputs(&mut args) {
        return report_errors(&[Problem::Other(e)]);
    }
    if args.dangerously_skip_permissions
        || args.permission_mode == Some(crate::spec::PermissionMode::BypassPermissions)
    {
        tracing::warn!(
            "permission mode bypassPermissions: every tool call a deny rule does not stop runs without an allow rule (the sandbox still confines commands)"
        );
    }
    let prepared = match prepare_all(&mut args) {
        Ok(p) => p,
        Err(errors) => return report_errors(&errors),
    };
    // A resumed run's own transcript directory.
    crate::git::credential::restore_left(&args.transcript_dir);
    let options = match batch_options(&args) {
        Ok(o) => o,
        Err(e) => return report_errors(&[Problem::Other(e)]),
    };
    let tasks = match batch::plan(prepared, &options) {
        Ok(p) => p,
        Err(errors) => {
            let errors: Problems = errors.into_iter().map(Problem::Other).collect();
            return report_errors(&errors);
        }
    };
    crate::model::anthropic::install_crypto_provider();
    let github = github::GithubEnv::detect();
    let command_token = github.as_ref().and_then(|_| github_commands(&tasks));
    let out = stdout_writer();
    let multi = tasks.len() > 1;
    let groups =
        command_token.map(|t| Arc::new(batch::group::Groups::new(t, multi && args.jobs > 1)));
    let show_progress = multi && progress::wanted(crate::log::quiet());
    if show_progress {
        progress::start(tasks.len());
    }
    crate::log::human::show_task(multi && args.jobs > 1);
    let format = args.format();
    let printer = out.clone();
    let transcript_dir = args.transcript_dir.clone();
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
            governors: Arc::new(crate::governor::Governors::new(args.jobs)),
        },
        groups: groups.clone(),
        on_result: Arc::new(move |r, skipped| {
            print_result(format, &printer, r, multi, skipped);
            if format == OutputFormat::Text
                && let Some(cmd) = continue_hint::resume_command(r, &transcript_dir)
            {
                write_out(&printer, &format!("To continue: {cmd}\n"));
            }
        }),
    };
    // The checkout credential is out of the tasks' repositories' configuration for the run,
    // and back once every task has ended (a signal ends the batch here too).
    let configs: Vec<PathBuf> = tasks
        .iter()
        .filter_map(|(p, _)| p.git.repo_root.as_deref())
        .filter_map(crate::git::config_file)
        .collect();
    let hidden = crate::git::credential::hide(&configs, &args.transcript_dir);
    let end = batch::run_all(tasks, schedule).await;
    hidden.restore();
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
    let mut report_failures = write_reports(&args, &end.results);
    if args.timings {
        crate::report::timing::print_table(&end.results);
    } else if let Some(line) = crate::report::rate_limit::line(&end.results) {
        tracing::info!("{line}");
    }
    if show_progress {
        progress::finish();
    }
    if let (Some(env), Some(groups)) = (&github, &groups) {
        github::resume_commands(&groups.token());
        if let Err(e) = github::finish(
            env,
            &end.results,
            args.junit.as_deref(),
            &args.transcript_dir,
        ) {
            report_failures.push(e);
        }
    }
    for r in &end.results {
        if let Some(t) = &r.transcript_path {
            tracing::info!(task = %r.task_name, outcome = %r.outcome.name(), transcript = %t.display(), "result");
        }
        if let Some(cmd) = continue_hint::resume_command(r, &args.transcript_dir) {
            tracing::warn!(task = %r.task_name, "stopped by a limit ({}); continue it with: {cmd}", r.outcome.name());
        }
        report_failures.extend(r.report_errors.iter().cloned());
    }
    // An interrupted run ends with the signal's code, also when no task was running then.
    let code = combined_exit_code(
        end.results
            .iter()
            .map(|r| r.outcome.exit_code())
            .chain(end.signal.map(|s| 128 + s)),
    );
    if report_failures.is_empty() {
        return code;
    }
    tracing::error!(
        "{} report file(s) could not be written: {}",
        report_failures.len(),
        report_failures.join("; ")
    );
    if code == 0 { EXIT_REPORT_FAILED } else { code }
}

/// What the flags point at, made concrete: `-p -` becomes the text on stdin,
/// `--system-prompt-file` and `--append-system-prompt-file` their files' text, `--continue` the
/// newest run's transcript, a session id given as the transcript that run's.
fn resolve_inputs(args: &mut ExecArgs) -> Result<(), String> {
    crate::cli::stdin::resolve(&mut args.prompt).map_err(|e| e.to_string())?;
    crate::cli::prompt_file::resolve(&mut args.system_prompt, args.system_prompt_file.as_deref())
        .map_err(|e| e.to_string())?;
    crate::cli::prompt_file::resolve(
        &mut args.append_system_prompt,
        args.append_system_prompt_file.as_deref(),
    )
    .map_err(|e| e.to_string())?;
    if args.continue_last {
        let t = sessions::newest(&args.transcript_dir).map_err(|e| e.to_string())?;
        tracing::info!(transcript = %t.display(), "continuing the newest run");
        args.resume = Some(t);
    } else if let Some(r) = &args.resume
        && !r.exists()
        && let Some(id) = r.to_str().filter(|s| sessions::looks_like_session_id(s))
    {
        let t = sessions::by_session_id(&args.transcript_dir, id).map_err(|e| e.to_string())?;
        tracing::info!(transcript = %t.display(), "resuming session {id}");
        args.resume = Some(t);
    }
    Ok(())
}

/// The batch options of `args`; `Err` when `--shard auto` cannot tell the shard.
fn batch_options(args: &ExecArgs) -> Result<batch::BatchOptions, String> {
    let shard = match args.shard {
        Some(s) => Some(s.resolve(args.shard_count, |k| std::env::var(k).ok())?),
        None => None,
    };
    Ok(batch::BatchOptions {
        shard,
        max_total_cost_usd: args.max_total_cost_usd,
        skip_passed: args.skip_passed.clone(),
        jobs: args.jobs,
    })
}

/// The run's files: the JUnit report and the structured output file. Returns what could not
/// be written, each naming its file.
fn write_reports(args: &ExecArgs, finished: &[RunResult]) -> Vec<String> {
    let mut failed = Vec::new();
    if let Some(path) = &args.junit
        && let Err(e) = crate::report::junit::write_junit(path, finished)
    {
        let why = format!("cannot write the JUnit report {}: {e}", path.display());
        tracing::error!("{why}");
        failed.push(why);
    }
    if let Some(path) = &args.output_file
        && let Err(e) = crate::report::structured::write_output_file(path, finished)
    {
        let why = format!("cannot write the output file {}: {e}", path.display());
        tracing::error!("{why}");
        failed.push(why);
    }
    failed
}
