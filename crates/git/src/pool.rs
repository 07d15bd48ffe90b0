//! The batch's pool of worktrees for its isolated tasks, prepared ahead of the scheduler so
//! that setting one up overlaps with the model latency of the tasks already running.
//!
//! How the worktrees are made is chosen once per batch, and logged:
//! - **overlay** (needs mount rights: root, or a container that grants `CAP_SYS_ADMIN`): one
//!   checkout of each base tree (the template), and per task an overlay mount on it with the
//!   task's own upper directory and git administrative directory. A mount costs a few system
//!   calls whatever the repository's size; the task's changes are read back from its upper
//!   directory, and the worktree is thrown away after the task.
//! - **checkout** (the fallback): up to `--jobs` full checkouts, made in parallel without any
//!   lock on the repository, each reset to a clean checkout between tasks (only what the
//!   previous task changed is written again).
//!
//! Either way at most `--jobs` worktrees are made ahead of the tasks that will take them, and
//! a task whose base was not known ahead (`base: working-tree`) gets one made when it starts.
//! `RUNNER_WORKTREES=checkout` forces the fallback; `RUNNER_WORKTREES=own` turns the pool off
//! (every isolated task checks out a worktree of its own, as a task run alone does).
//!
//! The pool lives in `<transcript-dir>/.worktrees/<pid>-<random>`, locked while the batch
//! runs; at the end everything in it is removed except the worktrees of interrupted tasks,
//! kept for `runner resume`. A batch that was killed, or that had no time left to remove its
//! files, is cleaned up by the next one (`crate::sweep`).
//!
//! When the batch is interrupted, [`WorktreePool::cancel`] stops all preparation at once: no
//! worktree is started, a checkout being made stops within a few hundred files, and a task
//! waiting for a worktree gets [`GitError::Cancelled`] (it never starts).

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use git2::{Oid, Repository};

use crate::checkout::Cancel;
use crate::layout::remove_logged;
use crate::lower::{CheckoutLower, Lower};
use crate::slot::Slot;
use crate::spec::GitBase;
use crate::template::Template;
use crate::{GitError, Lease, LeaseKind, WorktreeSource, checkout, git_err, io_err, sweep};
use crate::{objects, overlay};

/// The pool's directory under the transcript directory.
pub const POOL_DIR: &str = ".worktrees";

/// The environment variable that chooses how the pool makes worktrees ([`Choice`]).
pub const MODE_ENV: &str = "RUNNER_WORKTREES";

/// How a batch's isolated tasks get their worktrees (`RUNNER_WORKTREES`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    /// `auto` (the default): overlays where runner can mount them, else checkouts.
    Auto,
    /// `checkout`: a pool of checked-out worktrees, reset between tasks.
    Checkout,
    /// `own`: no pool; each task checks out a worktree of its own (as a task run alone).
    Own,
    /// `template`: overlays on a template checkout, even where the repository's own checkout
    /// could be the lower layer.
    Template,
}

impl Choice {
    /// The choice `RUNNER_WORKTREES` makes (an unknown value is reported and means `auto`).
    pub fn from_env() -> Choice {
        match std::env::var(MODE_ENV).as_deref() {
            Err(_) | Ok("" | "auto" | "overlay") => Choice::Auto,
            Ok("checkout") => Choice::Checkout,
            Ok("own") => Choice::Own,
            Ok("template") => Choice::Template,
            Ok(other) => {
                tracing::warn!(
                    "{MODE_ENV}={other} is not one of auto, template, checkout, own; using auto"
                );
                Choice::Auto
            }
        }
    }
}

/// How the pool makes worktrees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Overlay(overlay::Options),
    Checkout,
}

/// A base tree of one repository, and the untracked paths of its checkout the tasks see: the
/// worktrees of one key are interchangeable.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    common_dir: PathBuf,
    tree: Oid,
    shared: Vec<PathBuf>,
}

/// An isolated task of the batch, as the pool plans for it: its repository root, its base and
/// the untracked paths of the checkout it sees (`git.share_untracked`).
pub type Isolated = (PathBuf, GitBase, Vec<PathBuf>);

#[derive(Debug)]
enum TemplateState {
    Missing,
    Building,
    Ready(Arc<Lower>),
    Failed(String),
}

/// The pool's worktrees of one key.
#[derive(Debug)]
struct KeyState {
    /// The commit a worktree made ahead is detached at (a task sets its own when it takes one).
    commit: Oid,
    template: TemplateState,
    /// Whether git's filters are needed for this tree (decided once).
    filters: Option<bool>,
    /// The checkout of the repository, which may be the lower layer (known from a task).
    checkout: Option<PathBuf>,
    /// The checkout is not to be the lower layer (it changed while the batch ran, or could not
    /// be mounted).
    checkout_refused: bool,
    ready: Vec<Slot>,
    /// Tasks known to want one that have not taken it yet.
    demand: usize,
    /// Worktrees being made (or reset) for this key.
    preparing: usize,
}

#[derive(Debug, Default)]
struct State {
    keys: HashMap<Key, KeyState>,
    /// Worktrees tasks hold, by lease id.
    leased: HashMap<u64, (Key, Slot)>,
    /// Worktrees that exist or are being made (ready, leased, preparing).
    live: usize,
    next_id: u64,
    /// Background workers running.
    workers: usize,
    /// Worktrees kept for resume.
    kept: usize,
    /// Removals of given-back worktrees still running in the background.
    clearing: usize,
    /// Directories to remove at the end: worktrees given back or abandoned part way after
    /// the pool was cancelled (removing them is left out of the tasks' and workers' way).
    trash: Vec<PathBuf>,
    closed: bool,
}

/// A batch's worktree pool (see the module documentation).
#[derive(Debug, Clone)]
pub struct WorktreePool {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    /// The batch's directory.
    dir: PathBuf,
    /// `<transcript-dir>/.worktrees`.
    root: PathBuf,
    mode: Mode,
    /// Most worktrees made ahead per key, and (checkout mode) most worktrees at all.
    jobs: usize,
    /// Most background workers.
    threads: usize,
    /// The repository's own checkout may be the lower layer (not [`Choice::Template`]).
    zero_copy: bool,
    /// Where templates are kept between batches (`RUNNER_CACHE_DIR`), if anywhere.
    cache: Option<PathBuf>,
    /// Set when the batch is interrupted: stops every checkout and all preparation.
    cancel: Cancel,
    state: Mutex<State>,
    changed: Condvar,
    /// Held while whether a key needs git's filters is worked out (a walk of its tree): the
    /// batch's first tasks, which all ask at once, wait for one walk instead of each walking.
    filters_once: Mutex<()>,
    /// Held for the batch's life: tells a later batch this one is alive.
    _lock: File,
}

/// The common git directory of the repository at `root`, canonical.
fn common_dir(root: &Path) -> Result<(PathBuf, Repository), GitError> {
    let repo =
        super::pinned::open_root(root).map_err(git_err(format!("open {}", root.display())))?;
    let dir = repo.commondir().to_path_buf();
    Ok((std::fs::canonicalize(&dir).unwrap_or(dir), repo))
}

impl WorktreePool {
    /// The isolated tasks among the git plans `plans`, as [`WorktreePool::start`] takes them.
    pub fn isolated<'a>(plans: impl IntoIterator<Item = &'a super::GitPlan>) -> Vec<Isolated> {
        plans
            .into_iter()
            .filter(|g| g.isolate)
            .filter_map(|g| Some((g.repo_root.clone()?, g.base, g.share_untracked.clone())))
            .collect()
    }

    /// A pool for the `isolated` tasks of a batch (their repository root and base), in
    /// `transcript_dir/.worktrees`, making at most `jobs` worktrees ahead, as `choice` says;
    /// `None` when fewer than two tasks are isolated (a task alone gets a worktree of its own)
    /// or the choice is [`Choice::Own`]. Cleans up after killed batches first.
    pub fn start(
        isolated: &[Isolated],
        jobs: usize,
        transcript_dir: &Path,
        choice: Choice,
    ) -> Result<Option<WorktreePool>, GitError> {
        if isolated.len() < 2 || choice == Choice::Own {
            return Ok(None);
        }
        let jobs = jobs.max(1);
        let root = crate::absolute(&transcript_dir.join(POOL_DIR));
        let what = || format!("create the worktree pool in {}", root.display());
        std::fs::create_dir_all(&root).map_err(io_err(what()))?;
        // The pool is never part of a snapshot of the repository it may sit in.
        let _ = std::fs::write(root.join(".gitignore"), "*\n");
        sweep::sweep(&root);
        let id = uuid::Uuid::new_v4().simple().to_string();
        let dir = root.join(format!("{}-{}", std::process::id(), &id[..8]));
        std::fs::create_dir_all(&dir).map_err(io_err(what()))?;
        let lock = sweep::hold(&dir).map_err(io_err(what()))?;
        let mode = match choice {
            Choice::Checkout => {
                tracing::info!(
                    "{MODE_ENV}=checkout: isolated tasks run in a pool of up to {jobs} checked-out worktrees, reset between tasks"
                );
                Mode::Checkout
            }
            _ => match overlay::probe(&dir) {
                Ok(opts) => {
                    tracing::info!(
                        "isolated tasks run in overlay worktrees: an overlay mount per task on the repository's checkout or on one checkout of each base commit"
                    );
                    Mode::Overlay(opts)
                }
                Err(why) => {
                    tracing::warn!(
                        "overlay worktrees are not available here ({why}); isolated tasks run in a pool of up to {jobs} checked-out worktrees, reset between tasks (slower: a full checkout each)"
                    );
                    Mode::Checkout
                }
            },
        };
        crate::fast_object_reads();
        let threads = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(2)
            .min(jobs)
            .max(1);
        let pool = WorktreePool {
            inner: Arc::new(Inner {
                dir,
                root,
                mode,
                jobs,
                threads,
                zero_copy: choice != Choice::Template,
                cache: super::template_cache::dir(),
                cancel: Cancel::default(),
                state: Mutex::new(State::default()),
                changed: Condvar::new(),
                filters_once: Mutex::new(()),
                _lock: lock,
            }),
        };
        // What the tasks that start from HEAD will need, so it can be made ahead.
        // By repository root and shared paths: the key and commit of HEAD, if it has one.
        type Heads = HashMap<(PathBuf, Vec<PathBuf>), Option<(Key, Oid)>>;
        let mut heads = Heads::new();
        for (repo_root, base, shared) in isolated {
            if *base != GitBase::Head {
                continue;
            }
            let entry = (repo_root.clone(), shared.clone());
            let known = heads.entry(entry).or_insert_with(|| {
                let (common_dir, repo) = common_dir(repo_root).ok()?;
                let head = repo.head().ok()?.peel_to_commit().ok()?;
                let key = Key {
                    common_dir,
                    tree: head.tree_id(),
                    shared: shared.clone(),
                };
                Some((key, head.id()))
            });
            if let Some((key, commit)) = known.clone() {
                let mut st = pool.inner.lock();
                let ks = st.key(&key, commit);
                ks.demand += 1;
                ks.checkout.get_or_insert_with(|| repo_root.clone());
            }
        }
        pool.inner.refill();
        Ok(Some(pool))
    }

    /// This pool as the worktree source of a task's git plan.
    pub fn source(&self) -> Arc<dyn WorktreeSource> {
        Arc::new(self.clone())
    }

    /// Stop preparing worktrees (the batch was interrupted): none is started any more, a
    /// checkout being made stops before its next few hundred files, and tasks waiting for a
    /// worktree, or asking for one later, get [`GitError::Cancelled`] at once.
    pub fn cancel(&self) {
        let inner = &self.inner;
        if !inner.cancel.is_cancelled() {
            tracing::info!("worktree pool: no more worktrees are made for this batch");
        }
        inner.cancel.cancel();
        // Under the lock: a task that found the flag unset is waiting by now, and is woken.
        drop(inner.lock());
        inner.changed.notify_all();
    }

    /// End the batch's use of the pool, quickly: stop preparing worktrees
    /// ([`WorktreePool::cancel`]), keep the worktrees tasks still hold (a batch cut short),
    /// like those of interrupted tasks, and unmount the overlays made ahead. Removing the rest
    /// is [`WorktreePool::clean_up`]'s.
    pub fn close(&self) {
        self.cancel();
        let inner = &self.inner;
        let mut st = inner.lock();
        st.closed = true;
        let leased: Vec<Slot> = st.leased.drain().map(|(_, (_, s))| s).collect();
        st.kept += leased.len();
        st.live = st.live.saturating_sub(leased.len());
        for ks in st.keys.values() {
            for s in &ks.ready {
                s.unmount();
            }
        }
        drop(st);
        for s in leased {
            tracing::warn!(worktree = %s.worktree().display(), "worktree still in use at the end of the batch; kept");
            s.keep();
        }
    }

    /// End the batch's use of the pool and remove its files: [`WorktreePool::close`], then
    /// [`WorktreePool::clean_up`].
    pub fn shutdown(&self) {
        self.close();
        self.clean_up();
    }

    /// Remove what the batch leaves after [`WorktreePool::close`]: once the workers have
    /// stopped, every worktree no task holds, the templates and the batch's directory (unless
    /// it keeps worktrees for resume). Takes as long as removing those files takes; whatever
    /// is left when runner exits before it ends is removed by the next batch's sweep.
    pub fn clean_up(&self) {
        let inner = &self.inner;
        let mut st = inner.lock();
        st.closed = true;
        while st.workers > 0 || st.clearing > 0 {
            st = inner.wait(st);
        }
        let mut destroy = Vec::new();
        let mut templates = Vec::new();
        for (_, ks) in st.keys.drain() {
            destroy.extend(ks.ready);
            if let TemplateState::Ready(t) = ks.template
                && let Some(dir) = t.owned_dir()
            {
                templates.push(dir);
            }
        }
        let trash = std::mem::take(&mut st.trash);
        let kept = st.kept;
        drop(st);
        for s in destroy {
            s.destroy();
        }
        for d in trash {
            remove_logged(&d);
        }
        for t in templates {
            remove_logged(&t);
        }
        if kept == 0 {
            remove_logged(&inner.dir);
            // The pool directory goes too when no other batch uses it.
            let others = std::fs::read_dir(&inner.root)
                .map(|d| d.flatten().any(|e| e.file_name() != ".gitignore"))
                .unwrap_or(true);
            if !others {
                remove_logged(&inner.root);
            }
        }
    }
}

impl WorktreeSource for WorktreePool {
    fn take(
        &self,
        repo_root: &Path,
        commit: Oid,
        tree: Oid,
        shared: &[PathBuf],
    ) -> Result<Lease, GitError> {
        let inner = &self.inner;
        // As recorded when the batch was planned: no repository is opened per task.
        let common_dir = super::pinned::record(repo_root)
            .map_err(git_err(format!("open {}", repo_root.display())))?
            .common_dir;
        let key = Key {
            common_dir,
            tree,
            shared: shared.to_vec(),
        };
        inner
            .lock()
            .key(&key, commit)
            .checkout
            .get_or_insert_with(|| repo_root.to_path_buf());
        let slot = loop {
            let slot = inner.take_slot(&key, commit)?;
            // A worktree on the repository's checkout is handed out only while the checkout
            // is unchanged: after a change, every worktree comes from a template.
            match slot
                .lower
                .as_ref()
                .and_then(|l| Some((l.clone(), l.changed()?)))
            {
                Some((lower, why)) => {
                    inner.retire_checkout(&key, &lower, &format!("it changed: {why}"));
                    slot.destroy();
                    inner.lock().live -= 1;
                }
                None => break slot,
            }
        };
        if let Err(e) = slot.take(commit) {
            slot.destroy();
            inner.lock().live -= 1;
            return Err(e);
        }
        let lease_kind = match slot.upper() {
            Some(upper) => LeaseKind::Overlay { upper },
            None => LeaseKind::Checkout,
        };
        let path = slot.worktree();
        let mut st = inner.lock();
        st.next_id += 1;
        let id = st.next_id;
        st.leased.insert(id, (key, slot));
        drop(st);
        inner.refill();
        Ok(Lease {
            path,
            kind: lease_kind,
            id,
        })
    }

    fn release(&self, lease: Lease) {
        let inner = &self.inner;
        let mut st = inner.lock();
        let Some((key, slot)) = st.leased.remove(&lease.id) else {
            return;
        };
        match inner.mode {
            Mode::Overlay(_) => {
                st.live -= 1;
                drop(st);
                if let Some(why) = slot.lower.as_ref().and_then(|l| l.changed()) {
                    tracing::warn!(worktree = %slot.worktree().display(), "the repository's checkout changed while a task ran on it ({why}): the task may have seen the change");
                }
                inner.discard_slot(slot);
                inner.refill();
            }
            Mode::Checkout if st.closed || inner.cancel.is_cancelled() => {
                // No task needs it any more: removed at the end, not on the task's way out.
                st.live -= 1;
                st.trash.push(slot.dir.clone());
                drop(st);
                slot.given_back();
            }
            Mode::Checkout => {
                // Reset in the background, so the task's end is not held up by it.
                let commit = st.keys.get(&key).map_or(Oid::ZERO_SHA1, |k| k.commit);
                if let Some(ks) = st.keys.get_mut(&key) {
                    ks.preparing += 1;
                }
                st.workers += 1;
                drop(st);
                slot.given_back();
                let pool = self.inner.clone();
                std::thread::spawn(move || {
                    pool.reset_slot(key, slot, commit);
                    pool.worker_done();
                    pool.refill();
                });
            }
        }
    }

    fn keep(&self, lease: Lease) {
        let inner = &self.inner;
        let mut st = inner.lock();
        let Some((_, slot)) = st.leased.remove(&lease.id) else {
            return;
        };
        st.live -= 1;
        st.kept += 1;
        drop(st);
        slot.keep();
        inner.refill();
    }
}

impl State {
    fn key(&mut self, key: &Key, commit: Oid) -> &mut KeyState {
        self.keys.entry(key.clone()).or_insert_with(|| KeyState {
            commit,
            template: TemplateState::Missing,
            filters: None,
            checkout: None,
            checkout_refused: false,
            ready: Vec::new(),
            demand: 0,
            preparing: 0,
        })
    }
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn wait<'a>(&self, g: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
        self.changed.wait(g).unwrap_or_else(|e| e.into_inner())
    }

    /// A clean worktree of `key` for a task: one made ahead, else one made now (or, when the
    /// pool is full, the next one given back).
    fn take_slot(self: &Arc<Self>, key: &Key, commit: Oid) -> Result<Slot, GitError> {
        let mut st = self.lock();
        {
            let ks = st.key(key, commit);
            ks.demand = ks.demand.saturating_sub(1);
        }
        loop {
            if self.cancel.is_cancelled() {
                return Err(GitError::Cancelled);
            }
            if let Some(slot) = st.key(key, commit).ready.pop() {
                return Ok(slot);
            }
            let preparing = st.key(key, commit).preparing;
            let full = matches!(self.mode, Mode::Checkout) && st.live >= self.jobs;
            if preparing > 0 || full {
                if full && preparing == 0 {
                    // All the worktrees there may be exist: reset a ready one of another base
                    // for this one, or wait for one to be given back.
                    self.steal(&mut st, key, commit);
                }
                st = self.wait(st);
                continue;
            }
            st.live += 1;
            st.key(key, commit).preparing += 1;
            drop(st);
            let made = self.make_slot(key, commit);
            let mut st2 = self.lock();
            st2.key(key, commit).preparing -= 1;
            if made.is_err() {
                st2.live -= 1;
            }
            drop(st2);
            self.changed.notify_all();
            return made;
        }
    }

    /// Move a ready worktree of another base to `key` (checkout mode, pool full), preferring
    /// a base no task is waiting for; it is reset in a worker.
    fn steal(self: &Arc<Self>, st: &mut MutexGuard<'_, State>, key: &Key, commit: Oid) {
        let victim = st
            .keys
            .iter()
            .filter(|(k, ks)| *k != key && !ks.ready.is_empty())
            .min_by_key(|(_, ks)| ks.demand)
            .map(|(k, _)| k.clone());
        let Some(slot) = victim.and_then(|from| st.keys.get_mut(&from)?.ready.pop()) else {
            return;
        };
        st.key(key, commit).preparing += 1;
        st.workers += 1;
        let pool = self.clone();
        let key = key.clone();
        std::thread::spawn(move || {
            pool.reset_slot(key, slot, commit);
            pool.worker_done();
        });
    }

    /// Make a new worktree of `key` (and the key's template first, for an overlay).
    fn make_slot(self: &Arc<Self>, key: &Key, commit: Oid) -> Result<Slot, GitError> {
        let n = {
            let mut st = self.lock();
            st.next_id += 1;
            st.next_id
        };
        let dir = self.dir.join(format!("s{n}"));
        let filters = self.filters(key)?;
        let made = match self.mode {
            Mode::Overlay(opts) => {
                let lower = self.template(key, commit, filters)?;
                match Slot::overlay(&dir, &lower, &key.common_dir, commit, key.tree, opts) {
                    // A kernel that refuses the checkout as a layer (e.g. the pool inside it):
                    // a template from now on.
                    Err(e) if matches!(*lower, Lower::Checkout(_)) => {
                        self.discard(&dir, &e);
                        self.retire_checkout(key, &lower, &format!("cannot mount on it: {e}"));
                        let lower = self.template(key, commit, filters)?;
                        Slot::overlay(&dir, &lower, &key.common_dir, commit, key.tree, opts)
                    }
                    made => made,
                }
            }
            Mode::Checkout => Slot::checkout(
                &dir,
                &key.common_dir,
                commit,
                key.tree,
                filters,
                &self.cancel,
            ),
        };
        if let Err(e) = &made {
            self.discard(&dir, e);
        }
        made
    }

    /// Remove the directory of a worktree or template that could not be made: now, or at
    /// the end when the pool was cancelled (the task or worker that made it is not held up).
    fn discard(&self, dir: &Path, e: &GitError) {
        if matches!(e, GitError::Cancelled) {
            tracing::info!(dir = %dir.display(), "checkout stopped part way: the batch was interrupted");
            self.lock().trash.push(dir.to_path_buf());
        } else {
            remove_logged(dir);
        }
    }

    /// Whether git's filters are needed for `key`'s tree (decided once per key).
    fn filters(&self, key: &Key) -> Result<bool, GitError> {
        let known = |inner: &Inner| inner.lock().keys.get(key).and_then(|k| k.filters);
        if let Some(f) = known(self) {
            return Ok(f);
        }
        let _one = self
            .filters_once
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(f) = known(self) {
            return Ok(f);
        }
        let repo = super::pinned::open_common(&key.common_dir)
            .map_err(git_err(format!("open {}", key.common_dir.display())))?;
        // A checkout the plan found to hold the tree tells from its index whether the tree
        // has a `.gitattributes` file, without a walk of every tree object.
        let checkout = self.lock().keys.get(key).and_then(|k| k.checkout.clone());
        let known = checkout
            .filter(|_| self.zero_copy)
            .and_then(|root| super::verified::has_attributes(&root, key.tree));
        let f = checkout::needs_filters(&repo, key.tree, known);
        if let Some(ks) = self.lock().keys.get_mut(key) {
            ks.filters = Some(f);
        }
        Ok(f)
    }

    /// The template of `key`: made by the first thread that needs it, waited for by the
    /// others.
    fn template(&self, key: &Key, commit: Oid, filters: bool) -> Result<Arc<Lower>, GitError> {
        let mut st = self.lock();
        loop {
            if self.cancel.is_cancelled() {
                return Err(GitError::Cancelled);
            }
            match &st.key(key, commit).template {
                TemplateState::Ready(t) => return Ok(t.clone()),
                TemplateState::Failed(why) => {
                    return Err(GitError::Io {
                        what: format!("use the template checkout: {why}"),
                        source: std::io::Error::other("template checkout failed"),
                    });
                }
                TemplateState::Building => st = self.wait(st),
                TemplateState::Missing => break,
            }
        }
        let ks = st.key(key, commit);
        ks.template = TemplateState::Building;
        let checkout = ks.checkout.clone().filter(|_| !ks.checkout_refused);
        drop(st);
        let started = std::time::Instant::now();
        let made = match checkout.filter(|_| self.zero_copy) {
            Some(root) => match self.on_checkout(&root, key, filters) {
                Some(lower) => Ok(lower),
                None => self.make_template(key, commit, filters),
            },
            None => self.make_template(key, commit, filters),
        };
        let mut st = self.lock();
        let result = match made {
            Ok(t) => {
                tracing::info!(tree = %key.tree, ms = started.elapsed().as_millis() as u64, filters, "lower layer ready");
                let t = Arc::new(t);
                st.key(key, commit).template = TemplateState::Ready(t.clone());
                Ok(t)
            }
            Err(GitError::Cancelled) => {
                st.key(key, commit).template = TemplateState::Missing;
                Err(GitError::Cancelled)
            }
            Err(e) => {
                // An object not found may be there a moment later (a concurrent `git gc`
                // repacking): the next task that needs the template tries again.
                st.key(key, commit).template = if objects::not_found(&e) {
                    TemplateState::Missing
                } else {
                    TemplateState::Failed(e.to_string())
                };
                Err(e)
            }
        };
        drop(st);
        self.changed.notify_all();
        result
    }

    /// The repository's checkout `root` as the lower layer of `key`, if it holds exactly the
    /// tree (else why not is logged, and `None`).
    fn on_checkout(&self, root: &Path, key: &Key, filters: bool) -> Option<Lower> {
        // runner's own output directories in the checkout stay hidden even before they exist.
        let hide: Vec<PathBuf> = [self.root.parent(), Some(self.root.as_path())]
            .into_iter()
            .flatten()
            .filter_map(|p| p.strip_prefix(root).ok())
            .filter(|p| !p.as_os_str().is_empty())
            .map(Path::to_path_buf)
            .collect();
        match CheckoutLower::new(root, key.tree, filters, &key.shared, &hide) {
            Ok(c) => Some(Lower::Checkout(Box::new(c))),
            Err(why) => {
                tracing::info!(checkout = %root.display(), "the checkout cannot be the worktrees' lower layer ({why}); using a template checkout of the base commit");
                None
            }
        }
    }

    /// A template checkout of `key`'s tree: from the template cache when there is one, else
    /// made in the batch's directory.
    fn make_template(&self, key: &Key, commit: Oid, filters: bool) -> Result<Lower, GitError> {
        if let Some(cache) = &self.cache {
            return super::template_cache::take(
                cache,
                &key.common_dir,
                commit,
                key.tree,
                filters,
                &self.cancel,
            )
            .map(Lower::Template);
        }
        let n = {
            let mut st = self.lock();
            st.next_id += 1;
            st.next_id
        };
        let dir = self.dir.join(format!("t{n}-{:.12}", key.tree.to_string()));
        let made = Template::create(
            &dir,
            &key.common_dir,
            commit,
            key.tree,
            filters,
            &self.cancel,
        );
        if let Err(e) = &made {
            self.discard(&dir, e);
        }
        made.map(Lower::Template)
    }

    /// The checkout under `key`'s worktrees changed (`why`): no more worktrees on it; the
    /// ready ones are removed and the next one is made on a template.
    fn retire_checkout(self: &Arc<Self>, key: &Key, lower: &Arc<Lower>, why: &str) {
        let mut st = self.lock();
        let ks = st.key(key, Oid::ZERO_SHA1);
        if !ks.checkout_refused {
            tracing::warn!(
                "the repository's checkout is no longer the worktrees' lower layer ({why}); the next tasks' worktrees come from a template checkout of the base commit"
            );
        }
        ks.checkout_refused = true;
        if matches!(&ks.template, TemplateState::Ready(l) if Arc::ptr_eq(l, lower)) {
            ks.template = TemplateState::Missing;
        }
        let stale: Vec<Slot> = {
            let (stale, keep): (Vec<Slot>, Vec<Slot>) = std::mem::take(&mut ks.ready)
                .into_iter()
                .partition(|s| s.lower.as_ref().is_some_and(|l| Arc::ptr_eq(l, lower)));
            ks.ready = keep;
            stale
        };
        st.live -= stale.len();
        drop(st);
        for s in stale {
            self.discard_slot(s);
        }
        self.changed.notify_all();
    }

    /// Remove an overlay slot a task is done with: unmounted now, its files removed by a
    /// background thread (a task's upper directory can be large; its removal is off the
    /// critical path of the task's end and of the next task's start).
    fn discard_slot(self: &Arc<Self>, slot: Slot) {
        slot.unmount();
        let dir = slot.dir.clone();
        drop(slot);
        let trash = self
            .dir
            .join(format!(".trash-{}", uuid::Uuid::new_v4().simple()));
        if std::fs::rename(&dir, &trash).is_err() {
            remove_logged(&dir);
            return;
        }
        self.lock().clearing += 1;
        let pool = self.clone();
        std::thread::spawn(move || {
            remove_logged(&trash);
            pool.lock().clearing -= 1;
            pool.changed.notify_all();
        });
    }

    /// Make a given-back checkout clean again (for `key`), and put it back as ready; once the
    /// pool is cancelled it is left for the end instead.
    fn reset_slot(&self, key: Key, mut slot: Slot, commit: Oid) {
        let reset = if self.cancel.is_cancelled() {
            Err(GitError::Cancelled)
        } else {
            let filters = self.filters(&key).unwrap_or(true);
            slot.reset(commit, key.tree, filters)
        };
        let mut st = self.lock();
        if let Some(ks) = st.keys.get_mut(&key) {
            ks.preparing = ks.preparing.saturating_sub(1);
        }
        match reset {
            Ok(()) if !st.closed => {
                if let Some(ks) = st.keys.get_mut(&key) {
                    ks.ready.push(slot);
                    drop(st);
                    self.changed.notify_all();
                    return;
                }
                st.live -= 1;
                drop(st);
                slot.destroy();
            }
            Ok(()) => {
                st.live -= 1;
                drop(st);
                slot.destroy();
            }
            Err(GitError::Cancelled) => {
                st.live -= 1;
                st.trash.push(slot.dir.clone());
            }
            Err(e) => {
                tracing::warn!(worktree = %slot.worktree().display(), "cannot reset the worktree for the next task ({e}); removing it");
                st.live -= 1;
                drop(st);
                slot.destroy();
            }
        }
        self.changed.notify_all();
    }

    fn worker_done(&self) {
        self.lock().workers -= 1;
        self.changed.notify_all();
    }

    /// Start background workers for the worktrees that should be made ahead: per key, as
    /// many as tasks still want, up to `jobs` ready or being made (and, for checkouts, no more
    /// than `jobs` worktrees at all).
    fn refill(self: &Arc<Self>) {
        let mut st = self.lock();
        while !st.closed && !self.cancel.is_cancelled() && st.workers < self.threads {
            let cap = match self.mode {
                Mode::Overlay(_) => usize::MAX,
                Mode::Checkout => self.jobs,
            };
            if st.live >= cap {
                return;
            }
            let want = st
                .keys
                .iter()
                .find(|(_, ks)| {
                    let have = ks.ready.len() + ks.preparing;
                    have < ks.demand.min(self.jobs)
                })
                .map(|(k, ks)| (k.clone(), ks.commit));
            let Some((key, commit)) = want else {
                return;
            };
            st.live += 1;
            st.workers += 1;
            st.key(&key, commit).preparing += 1;
            let pool = self.clone();
            std::thread::spawn(move || {
                let made = pool.make_slot(&key, commit);
                let mut st = pool.lock();
                st.key(&key, commit).preparing -= 1;
                match made {
                    Ok(slot) if !st.closed => st.key(&key, commit).ready.push(slot),
                    Ok(slot) => {
                        st.live -= 1;
                        drop(st);
                        slot.destroy();
                        st = pool.lock();
                    }
                    Err(GitError::Cancelled) => st.live -= 1,
                    Err(e) => {
                        st.live -= 1;
                        // Stop making this key's worktrees ahead; a task that takes one
                        // makes its own and reports the error.
                        st.key(&key, commit).demand = 0;
                        tracing::warn!("cannot prepare a worktree ahead: {e}");
                    }
                }
                st.workers -= 1;
                drop(st);
                pool.changed.notify_all();
                pool.refill();
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::slot::SlotKind;

    #[test]
    fn slot_kinds_map_to_lease_kinds() {
        // An overlay slot's changes are in its upper directory; a checkout's are found by a walk.
        let s = Slot {
            dir: PathBuf::from("/x/s1"),
            kind: SlotKind::Checkout,
            tree: Oid::ZERO_SHA1,
            filters: false,
            common_dir: PathBuf::from("/r/.git"),
            lower: None,
        };
        assert!(s.upper().is_none());
        assert_eq!(s.worktree(), PathBuf::from("/x/s1/tree"));
    }

    /// A checkout changed while the batch runs on it: the next worktree comes from a template
    /// of the base commit, not from an overlay on the changed files.
    #[test]
    fn a_checkout_changed_during_the_batch_is_no_longer_the_lower_layer() {
        use crate::test_git::git;
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap().join("repo");
        std::fs::create_dir_all(root.join("src")).unwrap();
        git(&root, &["init", "-q", "-b", "main"]);
        std::fs::write(root.join("src/a.txt"), "a\n").unwrap();
        git(&root, &["add", "-A"]);
        git(&root, &["commit", "-q", "-m", "init"]);
        let isolated = vec![(root.clone(), GitBase::Head, Vec::new()); 3];
        let out = dir.path().join("out");
        let pool = WorktreePool::start(&isolated, 1, &out, Choice::Auto)
            .unwrap()
            .unwrap();
        if matches!(pool.inner.mode, Mode::Checkout) {
            eprintln!("skipped: no overlay mounts here");
            return;
        }
        let repo = Repository::open(&root).unwrap();
        let head = repo.head().unwrap().peel_to_commit().unwrap();
        let take = || pool.take(&root, head.id(), head.tree_id(), &[]).unwrap();
        let on_checkout = |pool: &WorktreePool| {
            pool.inner.lock().keys.values().any(|ks| {
                matches!(&ks.template, TemplateState::Ready(l) if matches!(**l, Lower::Checkout(_)))
            })
        };
        let a = take();
        assert!(on_checkout(&pool));
        let read = |l: &Lease| std::fs::read_to_string(l.path.join("src/a.txt")).unwrap();
        assert_eq!(read(&a), "a\n");
        std::fs::write(root.join("src/a.txt"), "changed\n").unwrap();
        let b = take();
        assert_eq!(read(&b), "a\n", "the base, from a template");
        assert!(!on_checkout(&pool));
        pool.release(a);
        pool.release(b);
        pool.shutdown();
        assert!(!out.join(POOL_DIR).exists());
    }
}
