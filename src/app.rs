//! The commands: `exec`, `validate`, `schema`. The binary calls these and exits with the
//! code they return. This module owns stdout.

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use tokio::sync::{Notify, Semaphore};

use crate::agent::{StopCause, Stopper};
use crate::batch;
use crate::cli::{ExecArgs, OutputFormat};
use crate::events::RunResult;
use crate::outcome::combined_exit_code;
use crate::outcome::{Outcome, OutcomeKind};
use crate::report::{SharedOut, github};
use crate::spec::{self, LoadedSpec};
use crate::task::{self, Overrides, PreparedTask, RunOptions};

/// Exit code for invalid input (nothing ran).
pub const EXIT_INVALID: i32 = 2;

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

/// `runner validate PATH...`.
pub fn validate(paths: &[PathBuf]) -> i32 {
    match load_all(paths) {
        Ok(specs) => {
            let out = stdout_writer();
            for s in &specs {
                if let Err(e) = s.check() {
                    return report_errors(&[e.to_string()]);
                }
                write_out(
                    &out,
                    &format!("{}: ok ({})\n", s.path.display(), s.spec.name),
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
            .flat_map(|s| task::split_tool_rules(s))
            .collect(),
        disallowed_tools: args
            .disallowed_tools
            .iter()
            .flat_map(|s| task::split_tool_rules(s))
            .collect(),
        replay: args.replay.clone(),
        max_retries: args.limits.max_retries,
        settings: args.settings.clone(),
        replay_mode: args.replay_mode,
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
    let req = crate::transcript::resume::ResumeRequest {
        transcript: transcript.to_path_buf(),
        spec: args.paths.first().cloned(),
        use_current_spec: args.use_current_spec,
        prompt: args.prompt.clone(),
    };
    crate::transcript::resume::prepare_resume(&req, o).map_err(|e| e.to_string())
}

/// Listen for SIGINT/SIGTERM: the first stops every task; the second wakes `second`.
fn spawn_signal_listener(
    stoppers: Vec<Stopper>,
    second: Arc<Notify>,
    last_signal: Arc<Mutex<i32>>,
) {
    use tokio::signal::unix::{SignalKind, signal};
    tokio::spawn(async move {
        let (Ok(mut int), Ok(mut term)) = (
            signal(SignalKind::interrupt()),
            signal(SignalKind::terminate()),
        ) else {
            tracing::warn!(
                "cannot install signal handlers; SIGINT/SIGTERM will kill runner without a report"
            );
            return;
        };
        let mut count = 0;
        loop {
            let sig = tokio::select! {
                _ = int.recv() => 2,
                _ = term.recv() => 15,
            };
            count += 1;
            if let Ok(mut l) = last_signal.lock() {
                *l = sig;
            }
            if count == 1 {
                tracing::warn!(
                    "received {}; stopping tasks and writing reports (send it again to cut this short)",
                    if sig == 15 { "SIGTERM" } else { "SIGINT" }
                );
                for s in &stoppers {
                    s.stop(StopCause::Signal(sig));
                }
            } else {
                tracing::warn!("second signal: writing reports now");
                second.notify_one();
            }
        }
    });
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

/// `runner exec PATH...`. Returns the exit code.
pub async fn exec(args: ExecArgs) -> i32 {
    let o = overrides(&args);
    let mut prepared: Vec<PreparedTask> = Vec::new();
    let mut errors = Vec::new();
    if let Some(transcript) = &args.resume {
        match resume_task(&args, transcript, &o) {
            Ok(p) => prepared.push(p),
            Err(e) => return report_errors(&[e]),
        }
    } else {
        let loaded = match load_all(&args.paths) {
            Ok(l) => l,
            Err(errors) => return report_errors(&errors),
        };
        for l in loaded {
            match task::prepare(l, &o) {
                Ok(p) => prepared.push(p),
                Err(e) => errors.push(e.to_string()),
            }
        }
    }
    if args.output_file.is_some() && !prepared.iter().any(|p| p.loaded.spec.output.is_some()) {
        tracing::warn!(
            "--output-file: no task sets `output:`, so the file will hold only null (see README \"Structured output\")"
        );
    }
    if args.record.is_some() && prepared.len() + errors.len() > 1 {
        errors.push("--record records one task; give a single task spec".to_string());
    }
    let patch_dir = args
        .patch_dir
        .clone()
        .unwrap_or_else(|| args.transcript_dir.join("patches"));
    let git_outputs = [args.transcript_dir.clone(), patch_dir.clone()];
    let several = prepared.len() + errors.len() > 1;
    let mut branches: HashMap<String, String> = HashMap::new();
    for p in &mut prepared {
        match crate::git::plan(&p.loaded, several, &patch_dir, &git_outputs) {
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
    if !errors.is_empty() {
        return report_errors(&errors);
    }
    let plan = match batch::plan(prepared, &args) {
        Ok(p) => p,
        Err(errors) => return report_errors(&errors),
    };
    let (prepared, mut pre_skipped): (Vec<PreparedTask>, Vec<Option<String>>) =
        plan.into_iter().unzip();
    let gate = Arc::new(batch::BatchGate::new(
        args.fail_fast,
        args.max_total_cost_usd,
    ));
    crate::model::anthropic::install_crypto_provider();
    let github = github::GithubEnv::detect();
    let command_token = github.as_ref().map(|_| {
        let mut values: Vec<String> = prepared
            .iter()
            .flat_map(|p| task::secret_names(&p.loaded))
            .filter_map(|n| std::env::var(n).ok())
            .filter(|v| v.len() >= crate::redact::MIN_SECRET_LEN)
            .collect();
        values.sort();
        values.dedup();
        github::mask_values(&values);
        // Model and tool text may reach the log from here on: no workflow commands in it.
        let token = github::random_token();
        github::stop_commands(&token);
        token
    });

    let out = stdout_writer();
    let out_after = out.clone();
    let opts = RunOptions {
        transcript_dir: args.transcript_dir.clone(),
        record: args.record.clone(),
        stream_out: (args.output_format == OutputFormat::StreamJson).then(|| out.clone()),
        gate: Arc::new(crate::retry::RateGate::new()),
    };
    let multi = prepared.len() > 1;
    let groups = command_token
        .clone()
        .map(|t| Arc::new(batch::group::Groups::new(t, multi && args.jobs > 1)));
    let groups_at_end = groups.clone();
    let show_progress = multi && batch::progress::wanted();
    if show_progress {
        batch::progress::start(prepared.len());
    }
    let stoppers: Vec<Stopper> = prepared.iter().map(|_| Stopper::default()).collect();
    let second = Arc::new(Notify::new());
    let last_signal = Arc::new(Mutex::new(2));
    spawn_signal_listener(stoppers.clone(), second.clone(), last_signal.clone());

    let specs: Vec<LoadedSpec> = prepared.iter().map(|p| p.loaded.clone()).collect();
    let results: Arc<Mutex<Vec<Option<RunResult>>>> =
        Arc::new(Mutex::new(vec![None; prepared.len()]));
    let results_for_tasks = results.clone();
    let sem = Arc::new(Semaphore::new(args.jobs as usize));
    // Permits are taken here, in the order the specs were given, before each task is spawned:
    // acquiring them inside the spawned tasks would let the runtime start them in any order.
    let format = args.output_format;
    let dispatch = async move {
        let mut handles = Vec::new();
        for (i, (task, stopper)) in prepared.into_iter().zip(stoppers).enumerate() {
            let Ok(permit) = sem.clone().acquire_owned().await else {
                break;
            };
            // Decided once the permit is held, so with --jobs 1 the previous task has finished.
            if let Some(why) = pre_skipped[i].take().or_else(|| gate.skip_reason()) {
                tracing::info!(task = %task.loaded.spec.name, "skipped: {why}");
                let result = batch::skipped_result(&task.loaded, why);
                batch::progress::task_finished(&result, false);
                print_result(format, &out, &result, multi, true);
                if let Ok(mut r) = results_for_tasks.lock() {
                    r[i] = Some(result);
                }
                continue;
            }
            let opts = opts.clone();
            let results = results_for_tasks.clone();
            let out = out.clone();
            let gate = gate.clone();
            let groups = groups.clone();
            handles.push(tokio::spawn(async move {
                let _permit = permit;
                let result = batch::run_one(task, &opts, stopper, groups.as_deref()).await;
                gate.record(&result);
                print_result(format, &out, &result, multi, false);
                if let Ok(mut r) = results.lock() {
                    r[i] = Some(result);
                }
            }));
        }
        futures_util::future::join_all(handles).await;
    };
    let cut_short = tokio::select! {
        _ = dispatch => false,
        _ = second.notified() => true,
    };
    let sig = last_signal.lock().map(|s| *s).unwrap_or(2);
    let mut unfinished = Vec::new();
    let finished: Vec<RunResult> = {
        let guard = match results.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        guard
            .iter()
            .zip(&specs)
            .map(|(r, l)| {
                r.clone().unwrap_or_else(|| {
                    let mut o = Outcome::new(
                        OutcomeKind::Interrupted,
                        "cut short by a second signal before the task finished",
                    );
                    o.signal = Some(sig);
                    let r = task::not_run_result(l, o);
                    unfinished.push(r.clone());
                    r
                })
            })
            .collect()
    };
    // Tasks cut short still get their result on stdout, in the chosen format.
    for r in &unfinished {
        let text = match format {
            OutputFormat::Text => crate::report::text::render_text(r, multi),
            OutputFormat::Json | OutputFormat::StreamJson => {
                format!("{}\n", crate::report::json::result_value(r))
            }
        };
        write_out(&out_after, &text);
    }
    if cut_short {
        tracing::warn!(
            "reports written for {} task(s); unfinished tasks are marked interrupted",
            finished.len()
        );
    }
    if let Some(path) = &args.junit
        && let Err(e) = crate::report::junit::write_junit(path, &finished)
    {
        tracing::error!("cannot write the JUnit report {}: {e}", path.display());
    }
    if let Some(path) = &args.output_file
        && let Err(e) = crate::report::structured::write_output_file(path, &finished)
    {
        tracing::error!("cannot write the output file {}: {e}", path.display());
    }
    if show_progress {
        batch::progress::finish();
    }
    if let (Some(env), Some(groups)) = (&github, &groups_at_end) {
        github::resume_commands(&groups.token());
        github::finish(env, &finished, args.junit.as_deref(), &args.transcript_dir);
    }
    for r in &finished {
        if let Some(t) = &r.transcript_path {
            tracing::info!(task = %r.task_name, outcome = r.outcome.name(), transcript = %t.display(), "result");
        }
    }
    combined_exit_code(finished.iter().map(|r| r.outcome.exit_code()))
}
