//! (4) A batch of 100 tasks × 5 turns at `--jobs 1, 8, 32`, with a git worktree per task and
//! in place, on a generated repository of `BENCH_REPO_FILES` files or a copy of `BENCH_REPO`;
//! and git's own cost per task through the library.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::common::{Table, fmt_dur, median, median_f64};
use crate::support::{self, MockAnthropic, MockOptions, MockTurn, tool_turn};
use crate::{env_usize, load_average, max_rss_kb, runner, timed};

/// The repository a batch runs in: a generated tree or a clone of `BENCH_REPO`, with the task
/// specs committed; removed on drop.
pub struct BatchRepo {
    _dir: tempfile::TempDir,
    path: PathBuf,
    /// Files in its HEAD commit.
    pub files: usize,
}

impl BatchRepo {
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn git(&self, args: &[&str]) -> String {
        support::git(&self.path, args)
    }
}

/// Where the bench's repositories go: `BENCH_REPO_DIR`, else the system temp directory.
fn repo_parent() -> tempfile::TempDir {
    match std::env::var("BENCH_REPO_DIR") {
        Ok(d) => tempfile::tempdir_in(d).expect("BENCH_REPO_DIR"),
        Err(_) => tempfile::tempdir().unwrap(),
    }
}

/// The batch's repository: a clone of `BENCH_REPO` when set (a real project; its history is
/// shared through `git clone --local`), else `files` generated files
/// ([`crate::tree::generate`]). `add` writes more files (the task specs) before the commit.
pub fn batch_repo(files: usize, add: impl FnOnce(&Path)) -> BatchRepo {
    let dir = repo_parent();
    let path = dir.path().join("repo");
    match std::env::var("BENCH_REPO") {
        Ok(src) => {
            let out = Command::new("git")
                .args(["clone", "-q", "--local", &src])
                .arg(&path)
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .output()
                .expect("git clone");
            assert!(out.status.success(), "clone {src}: {out:?}");
        }
        Err(_) => {
            std::fs::create_dir(&path).unwrap();
            support::git(&path, &["init", "-q", "-b", "main"]);
            crate::tree::generate(&path, files);
        }
    }
    for (k, v) in [
        ("user.name", "Runner Bench"),
        ("user.email", "bench@example.invalid"),
        ("commit.gpgsign", "false"),
    ] {
        support::git(&path, &["config", k, v]);
    }
    add(&path);
    support::git(&path, &["add", "-A"]);
    // Files written in the same second as the index are "racily clean" to git and get hashed
    // again by every status or snapshot; a real checkout's files are older than its index.
    std::thread::sleep(Duration::from_millis(1100));
    support::git(&path, &["commit", "-q", "-m", "bench tasks"]);
    let files = support::git(&path, &["ls-files"]).lines().count();
    let path = std::fs::canonicalize(&path).unwrap();
    BatchRepo {
        _dir: dir,
        path,
        files,
    }
}

/// Where the batch's transcript directories (and so the worktrees) go: `BENCH_OUT_DIR`, or
/// the system temp directory.
pub fn batch_out_dir() -> tempfile::TempDir {
    match std::env::var("BENCH_OUT_DIR") {
        Ok(d) => tempfile::tempdir_in(d).expect("BENCH_OUT_DIR"),
        Err(_) => tempfile::tempdir().unwrap(),
    }
}

/// Write `tasks` specs for the batch into `dir`, with `git` (a YAML `git:` block) in each.
fn write_batch_specs(dir: &Path, reads: &Path, tasks: usize, turns: usize, git: &str) {
    std::fs::create_dir_all(dir).unwrap();
    for i in 0..tasks {
        // Every task ends at its turn limit after exactly 5 tool turns, whatever script turns
        // it is given: the mock answers requests in arrival order, so with --jobs > 1 the
        // tasks share one script, and any interleaving gives each task 5 requests.
        support::write_spec_named(
            dir,
            &format!("t{i:03}.yaml"),
            &format!(
                "name: t{i:03}\nprompt: read the sources\nmodel: claude-sonnet-4-5\nworkdir: ../..\nadditional_directories: [{}]\ntools: [Read]\npermissions:\n  mode: dontAsk\nlimits:\n  max_turns: {turns}\n{git}",
                reads.display()
            ),
        );
    }
}

/// Mount points under `dir` (from /proc/self/mountinfo): none may outlive a run.
pub fn mounts_under(dir: &Path) -> Vec<String> {
    let info = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let dir = dir.to_string_lossy().into_owned();
    info.lines()
        .filter_map(|l| l.split(' ').nth(4))
        .filter(|m| m.starts_with(&dir))
        .map(String::from)
        .collect()
}

/// git's own cost per task, through the library: `git::begin` + `git::finish` of a task that
/// writes one new file, for an isolated task with a worktree of its own (the method before the
/// pool), from the batch's pool (overlay where it can mount, and checkouts), and in place.
/// Medians of `runs`; a pool's first `begin` (which makes the template, or the first checkout)
/// is reported on its own.
fn git_task_cost(root: &Path, runs: usize) -> Vec<(String, Duration, Duration)> {
    use runner::git::pool::{Choice, WorktreePool};
    use runner::spec::GitBase;
    let out = batch_out_dir();
    let mut rows = Vec::new();
    let variants: [(&str, bool, Option<Choice>); 4] = [
        ("worktree of its own (no pool)", true, None),
        ("pool, overlay where it can mount", true, Some(Choice::Auto)),
        (
            "pool, checkouts (RUNNER_WORKTREES=checkout)",
            true,
            Some(Choice::Checkout),
        ),
        ("in place (isolate: false)", false, None),
    ];
    let wanted = std::env::var("BENCH_GIT_VARIANTS").unwrap_or_default();
    for (label, isolate, choice) in variants {
        if !wanted.is_empty() && !wanted.split(',').any(|w| label.contains(w.trim())) {
            continue;
        }
        let transcripts = out.path().join(format!("t-{}", rows.len()));
        // Two isolated tasks whose base is not known ahead: nothing is made ahead, so each
        // `begin` pays for its worktree.
        let pool = choice.and_then(|c| {
            let isolated = vec![(root.to_path_buf(), GitBase::WorkingTree, Vec::new()); 2];
            WorktreePool::start(&isolated, 1, &transcripts, c).expect("pool")
        });
        let plan = runner::git::GitPlan {
            repo_root: Some(root.to_path_buf()),
            isolate,
            base: GitBase::Head,
            require_changes: false,
            branch: None,
            author: None,
            patch_dir: out.path().join("patches"),
            exclude: vec![out.path().to_path_buf()],
            worktrees: pool.as_ref().map(|p| p.source()),
            resume_from: None,
            share_untracked: Vec::new(),
        };
        let mut begins = Vec::new();
        let mut finishes = Vec::new();
        for n in 0..runs {
            let run_dir = transcripts.join(format!("run-{n}"));
            std::fs::create_dir_all(&run_dir).unwrap();
            let sid = format!("{n:08}-0000-0000-0000-000000000000");
            let t = Instant::now();
            let task = runner::git::begin(&plan, &format!("g{n}"), &sid, root, &run_dir)
                .expect("git begin")
                .expect("a git task");
            begins.push(t.elapsed());
            let new_file = task.root().join("bench-new-file.txt");
            std::fs::write(&new_file, format!("task {n}\n")).unwrap();
            let end = runner::git::Ending {
                task: "g",
                session_id: &sid,
                success: true,
                interrupted: false,
            };
            let t = Instant::now();
            let (summary, err) = runner::git::finish(task, end);
            finishes.push(t.elapsed());
            assert!(err.is_none(), "git finish: {err:?}");
            assert_eq!(summary.files_changed, 1, "{label}: one new file");
            if !isolate {
                std::fs::remove_file(&new_file).unwrap();
            }
        }
        if let Some(p) = &pool {
            p.shutdown();
            rows.push((
                format!("{label}: first task (makes the template or first checkout)"),
                begins[0],
                finishes[0],
            ));
            begins.remove(0);
            finishes.remove(0);
        }
        rows.push((
            format!("{label}: per task"),
            median(&begins),
            median(&finishes),
        ));
        assert_eq!(mounts_under(out.path()), Vec::<String>::new(), "{label}");
    }
    rows
}

/// The files the tasks Read: twenty small Rust files in a directory of their own (kept while
/// the returned directory lives).
fn read_files() -> (tempfile::TempDir, std::path::PathBuf) {
    let reads_dir = tempfile::tempdir().unwrap();
    let reads = std::fs::canonicalize(reads_dir.path()).unwrap();
    for i in 0..20 {
        let body: String = (0..60)
            .map(|l| format!("pub fn item_{i}_{l}(x: u32) -> u32 {{ x + {l} }}\n"))
            .collect();
        std::fs::write(reads.join(format!("mod_{i}.rs")), body).unwrap();
    }
    (reads_dir, reads)
}

/// A batch run of `tasks` tasks of `turns` turns each ended as designed: every request made,
/// every Read answered with the file, nothing left behind, one patch per task.
fn assert_batch_done(
    mock: &MockAnthropic,
    repo: &BatchRepo,
    out_dir: &Path,
    tasks: usize,
    turns: usize,
) {
    assert_eq!(mock.requests().len(), tasks * turns);
    mock.assert_clean();
    // Every Read call worked (none denied): every request but a task's first ends
    // with the result of the call before it, which holds the file read.
    let reqs = mock.requests();
    let results: Vec<String> = reqs
        .iter()
        .flat_map(|r| r.tool_results().into_iter().map(|v| v.to_string()))
        .collect();
    assert_eq!(results.len(), tasks * (turns - 1));
    assert!(
        results.iter().all(|r| r.contains("pub fn item_")),
        "a Read failed: {:?}",
        results.iter().find(|r| !r.contains("pub fn item_"))
    );
    // Nothing is left behind: no worktree, no mount, no pool directory.
    let worktrees = repo.git(&["worktree", "list"]);
    assert_eq!(worktrees.lines().count(), 1, "worktrees left: {worktrees}");
    let mounts = mounts_under(out_dir);
    assert!(mounts.is_empty(), "mounts left: {mounts:?}");
    assert!(
        !out_dir.join(".worktrees").exists(),
        "worktree pool left behind"
    );
    let patches = std::fs::read_dir(out_dir.join("patches"))
        .map(|d| d.count())
        .unwrap_or(0);
    assert_eq!(patches, tasks, "one patch per task");
}

pub fn bench_batch() {
    let latency = Duration::from_millis(env_usize("BENCH_LATENCY_MS", 100) as u64);
    let batch_runs = env_usize("BENCH_BATCH_RUNS", 3).max(1);
    let j1_runs = env_usize("BENCH_BATCH_J1_RUNS", 1).max(1);
    let repo_files = env_usize("BENCH_REPO_FILES", 3000);
    let tasks = env_usize("BENCH_BATCH_TASKS", 100).max(1);
    let jobs_list: Vec<usize> = std::env::var("BENCH_BATCH_JOBS")
        .ok()
        .map(|v| v.split(',').filter_map(|j| j.trim().parse().ok()).collect())
        .filter(|v: &Vec<usize>| !v.is_empty())
        .unwrap_or_else(|| vec![1, 8, 32]);
    let variants_wanted = std::env::var("BENCH_BATCH_VARIANTS").unwrap_or_default();
    let turns = 5usize;
    // The files the tasks Read are outside the repository (an additional directory), so one
    // shared script of absolute paths works whether a task runs in the repository or in a
    // worktree of its own.
    let (_reads_dir, reads) = read_files();
    // The specs are committed in the repository, as in a project that keeps its tasks there;
    // `workdir` is the repository root.
    let variants: Vec<(&str, &str, &str)> = [
        ("worktrees", "git:\n  isolate: true\n", ".bench/specs-wt"),
        (
            "in place",
            "git:\n  isolate: false\n",
            ".bench/specs-inplace",
        ),
    ]
    .into_iter()
    .filter(|(label, _, _)| variants_wanted.is_empty() || variants_wanted.contains(label))
    .collect();
    let t0 = Instant::now();
    let repo = batch_repo(repo_files, |dir| {
        for (_, git, specs) in &variants {
            write_batch_specs(&dir.join(specs), &reads, tasks, turns, git);
        }
    });
    println!(
        "batch repository: {} files ({}), made in {}",
        repo.files,
        std::env::var("BENCH_REPO").unwrap_or_else(|_| "generated".into()),
        fmt_dur(t0.elapsed())
    );
    let root = repo.path().to_path_buf();
    let mut t = Table::new(&[
        &format!(
            "batch {tasks} tasks × {turns} turns, repo of {} files",
            repo.files
        ),
        "median wall",
        "ideal ⌈tasks/jobs⌉×5×latency",
        "ratio",
        "peak RSS",
        "load (1 min) per run",
        "target",
    ]);
    let mut j1_walls: Vec<(&str, Duration)> = Vec::new();
    for &jobs in &jobs_list {
        let runs = if jobs == 1 { j1_runs } else { batch_runs };
        let ideal = latency * (tasks.div_ceil(jobs) * turns) as u32;
        for (label, _, specs) in &variants {
            let mut walls = Vec::new();
            let mut rss = Vec::new();
            let mut loads = Vec::new();
            let mut lowers = Vec::new();
            for _ in 0..runs {
                let script: Vec<MockTurn> = (0..tasks * turns)
                    .map(|n| {
                        tool_turn(
                            &format!("toolu_b{n:04}"),
                            "Read",
                            json!({"file_path": reads.join(format!("mod_{}.rs", n % 20))}),
                        )
                        .delayed(latency)
                    })
                    .collect();
                let mock = MockAnthropic::start_with(script, MockOptions::new());
                let out_dir = batch_out_dir();
                let mut cmd = runner(&mock);
                cmd.current_dir(repo.path())
                    .arg("exec")
                    .arg(root.join(specs))
                    .arg("--jobs")
                    .arg(jobs.to_string())
                    .arg("--transcript-dir")
                    .arg(out_dir.path());
                // How the pool makes worktrees: `auto` (overlays where runner can mount),
                // `checkout` (the fallback) or `own` (no pool: a checkout per task, as before).
                if let Ok(mode) = std::env::var("BENCH_WORKTREES") {
                    cmd.env("RUNNER_WORKTREES", mode);
                }
                // Templates kept between the runs (`RUNNER_CACHE_DIR`): the first run makes
                // one, the later runs reuse it.
                if let Ok(cache) = std::env::var("BENCH_CACHE_DIR") {
                    cmd.env("RUNNER_CACHE_DIR", cache);
                }
                let mut cmd = timed(&cmd);
                loads.push(load_average().split(' ').next().unwrap_or("?").to_string());
                let spawned = Instant::now();
                let out = cmd.output().expect("spawn runner");
                walls.push(spawned.elapsed());
                let stderr = String::from_utf8_lossy(&out.stderr);
                // Exit 3: every task stopped at max_turns, as designed.
                assert_eq!(out.status.code(), Some(3), "runner: {stderr}");
                rss.push(max_rss_kb(&stderr).expect("time -v output") as f64 / 1024.0);
                lowers.push(lower_layer(&stderr));
                assert_batch_done(&mock, &repo, out_dir.path(), tasks, turns);
            }
            let m = median(&walls);
            if jobs == 1 {
                j1_walls.push((label, m));
            }
            t.row(vec![
                format!("--jobs {jobs}, {label} ({runs} run(s))"),
                fmt_dur(m),
                fmt_dur(ideal),
                format!("{:.3}×", m.as_secs_f64() / ideal.as_secs_f64()),
                format!("{:.1} MB", median_f64(&rss)),
                loads.join(", "),
                if jobs == 32 {
                    "≤ 1.2×, ≤ 100 MB".into()
                } else {
                    "".into()
                },
            ]);
            println!(
                "  --jobs {jobs}, {label}: walls {:?}, lower layers {lowers:?}",
                walls.iter().map(|d| fmt_dur(*d)).collect::<Vec<_>>()
            );
        }
    }
    println!("{}", t.render());
    if let [(_, wt), (_, inplace)] = j1_walls[..] {
        println!(
            "--jobs 1: worktrees cost {} per task more than in place ((wall − wall) / {tasks})",
            fmt_dur(wt.saturating_sub(inplace) / tasks as u32)
        );
    }
    println!(
        "latency {} per request (before the response headers)\n",
        fmt_dur(latency)
    );
    if std::env::var("BENCH_GIT_COST").as_deref() == Ok("0") {
        return;
    }
    print_git_cost(&root, repo.files);
}

/// What the overlay worktrees of a run were layered on, from runner's log.
fn lower_layer(stderr: &str) -> &'static str {
    if stderr.contains("worktrees are overlays on it (no template)") {
        "checkout"
    } else if stderr.contains("template checkout reused from the cache") {
        "cached template"
    } else if stderr.contains("updated to the base commit by the difference") {
        "cached template, updated"
    } else if stderr.contains("template checkout made in the cache") {
        "cached template, made"
    } else if stderr.contains("isolated tasks run in overlay worktrees") {
        "template"
    } else {
        "no overlays"
    }
}

/// `cargo bench --bench macro -- gitcost`: only git's cost per task, on the same repository
/// as the batch (`BENCH_REPO` or `BENCH_REPO_FILES`); `BENCH_GIT_VARIANTS` picks variants by
/// a word of their label (e.g. `overlay`), for profiling one at a time.
pub fn bench_git_cost() {
    let repo = batch_repo(env_usize("BENCH_REPO_FILES", 3000), |_| {});
    println!("repository: {} files", repo.files);
    print_git_cost(repo.path(), repo.files);
}

/// The snapshot of a working tree as runner made it before (`git add -A` on an in-memory
/// index: `add_all` then `update_all`, two walks, and `write_tree`), for comparison.
fn snapshot_two_walks(root: &Path) -> git2::Oid {
    let repo = git2::Repository::open(root).unwrap();
    let mut index = repo.index().unwrap();
    index
        .add_all(["*"], git2::IndexAddOption::DEFAULT, None)
        .unwrap();
    index.update_all(["*"], None).unwrap();
    index.write_tree().unwrap()
}

/// The working-tree snapshot before and after, timed in turns under the same load: the two
/// walks of before, and the one walk of `git::begin` in place (which is one snapshot).
fn snapshot_cost(root: &Path, runs: usize) -> (Duration, Duration) {
    let out = batch_out_dir();
    let plan = runner::git::GitPlan {
        repo_root: Some(root.to_path_buf()),
        isolate: false,
        patch_dir: out.path().join("patches"),
        exclude: vec![out.path().to_path_buf()],
        ..Default::default()
    };
    let (mut before, mut after) = (Vec::new(), Vec::new());
    for n in 0..runs {
        let t = Instant::now();
        snapshot_two_walks(root);
        before.push(t.elapsed());
        // The task's output directory, where its git base is recorded.
        let run_dir = out.path().join(format!("{n}"));
        std::fs::create_dir_all(&run_dir).unwrap();
        let t = Instant::now();
        let task = runner::git::begin(&plan, "s", "00000000-0", root, &run_dir)
            .unwrap()
            .unwrap();
        after.push(t.elapsed());
        assert_eq!(
            task.base_commit.to_string(),
            runner::git::repo_info(root).commit.unwrap(),
            "in place: the base commit is HEAD"
        );
    }
    (median(&before), median(&after))
}

fn print_git_cost(root: &Path, files: usize) {
    let runs = env_usize("BENCH_RUNS", 5).max(1) * 2 + 1;
    let (before, after) = snapshot_cost(root, runs);
    let mut t = Table::new(&[
        &format!("snapshot of the working tree, {files} files"),
        "median",
    ]);
    t.row(vec![
        "add_all + update_all + write_tree (before)".into(),
        fmt_dur(before),
    ]);
    t.row(vec![
        "one walk against HEAD's tree (after)".into(),
        fmt_dur(after),
    ]);
    println!("{}", t.render());
    let mut t = Table::new(&[
        &format!("git per task, repo of {files} files"),
        "begin",
        "finish",
        "total",
    ]);
    for (label, b, f) in git_task_cost(root, runs) {
        t.row(vec![label, fmt_dur(b), fmt_dur(f), fmt_dur(b + f)]);
    }
    println!("{}", t.render());
    println!(
        "(git::begin + git::finish through the library, median of {runs}; load {})\n",
        load_average()
    );
}
