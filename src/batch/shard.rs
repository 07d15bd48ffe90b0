//! `--shard i/n`: which tasks one shard runs. A shard is chosen by a hash of the task name, so a
//! task stays in its shard when spec files are reordered or other tasks are added.
//!
//! `--shard auto` takes the shard from the environment of a Kubernetes Indexed Job's pod:
//! `JOB_COMPLETION_INDEX` (0-based) and the number of shards (`--shard-count` or
//! `RUNNER_SHARD_COUNT`, the Job's `completions`).

use std::str::FromStr;

use sha2::{Digest, Sha256};

/// A `--shard` value that is malformed, or a shard `--shard auto` cannot tell from the
/// environment (the message names the value or variable and what is expected).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ShardError(pub String);

impl From<String> for ShardError {
    fn from(s: String) -> Self {
        ShardError(s)
    }
}

/// The message at the command line's edge.
impl From<ShardError> for String {
    fn from(e: ShardError) -> Self {
        e.0
    }
}

/// `--shard i/n`: run the i-th (1-based) of n shards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// 1-based shard index.
    pub index: u32,
    /// Number of shards.
    pub count: u32,
}

impl FromStr for Shard {
    type Err = ShardError;

    fn from_str(s: &str) -> Result<Shard, ShardError> {
        let bad = || {
            ShardError(format!(
                "invalid shard `{s}`; expected I/N with 1 <= I <= N, e.g. 2/4"
            ))
        };
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let index: u32 = i.trim().parse().map_err(|_| bad())?;
        let count: u32 = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

/// The variable Kubernetes sets to the 0-based index of an Indexed Job's pod.
pub(crate) const COMPLETION_INDEX_VAR: &str = "JOB_COMPLETION_INDEX";
/// The variable holding the number of shards for `--shard auto`.
pub(crate) const SHARD_COUNT_VAR: &str = "RUNNER_SHARD_COUNT";

/// `--shard`: a given shard, or `auto` (from an Indexed Job's environment).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShardArg {
    /// `I/N`.
    Fixed(Shard),
    /// `auto`.
    Auto,
}

impl FromStr for ShardArg {
    type Err = ShardError;

    fn from_str(s: &str) -> Result<ShardArg, ShardError> {
        if s.trim() == "auto" {
            return Ok(ShardArg::Auto);
        }
        s.parse::<Shard>()
            .map(ShardArg::Fixed)
            .map_err(|e| ShardError(format!("{e}, or `auto`")))
    }
}

impl ShardArg {
    /// The shard to run: the one given, or for `auto` shard `JOB_COMPLETION_INDEX + 1` of
    /// `count` (else `RUNNER_SHARD_COUNT`), with variables read through `env`.
    pub fn resolve(
        self,
        count: Option<u32>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Shard, ShardError> {
        match self {
            ShardArg::Fixed(s) if count.is_none_or(|c| c == s.count) => return Ok(s),
            ShardArg::Fixed(s) => {
                return Err(ShardError(format!(
                    "--shard {}/{} gives the number of shards; --shard-count goes with --shard auto",
                    s.index, s.count
                )));
            }
            ShardArg::Auto => {}
        }
        let index = env(COMPLETION_INDEX_VAR).ok_or_else(|| {
            format!(
                "--shard auto needs {COMPLETION_INDEX_VAR} (Kubernetes sets it in the pods of an Indexed Job); it is not set"
            )
        })?;
        let index: u32 = index.trim().parse().map_err(|_| {
            format!("{COMPLETION_INDEX_VAR} is `{index}`; expected a number from 0")
        })?;
        let count = match count {
            Some(c) => c,
            None => {
                let v = env(SHARD_COUNT_VAR).ok_or_else(|| {
                    format!(
                        "--shard auto needs the number of shards: --shard-count N or {SHARD_COUNT_VAR} (the Indexed Job's completions)"
                    )
                })?;
                v.trim().parse().ok().filter(|c| *c > 0).ok_or_else(|| {
                    format!("{SHARD_COUNT_VAR} is `{v}`; expected a positive number")
                })?
            }
        };
        if index >= count {
            return Err(ShardError(format!(
                "{COMPLETION_INDEX_VAR} is {index}, but there are {count} shards (indexes 0 to {}); check --shard-count or {SHARD_COUNT_VAR} against the Job's completions",
                count - 1
            )));
        }
        Ok(Shard {
            index: index + 1,
            count,
        })
    }
}

impl Shard {
    /// The 1-based shard a task named `name` belongs to among `count` shards: the first eight
    /// bytes of SHA-256 of the name, modulo `count`. Depends on nothing but the name.
    pub fn of(name: &str, count: u32) -> u32 {
        let digest = Sha256::digest(name.as_bytes());
        let mut first = [0u8; 8];
        first.copy_from_slice(&digest[..8]);
        (u64::from_be_bytes(first) % u64::from(count.max(1))) as u32 + 1
    }

    /// Whether the task named `name` is in this shard.
    pub fn contains(&self, name: &str) -> bool {
        Shard::of(name, self.count) == self.index
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    /// A small deterministic generator for the property tests (no extra dependency).
    struct XorShift(u64);
    impl XorShift {
        fn next(&mut self) -> u64 {
            let mut x = self.0;
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            self.0 = x;
            x
        }
    }

    fn names(rng: &mut XorShift, n: usize) -> Vec<String> {
        (0..n)
            .map(|i| format!("task-{}-{i}[crate=c{}]", rng.next() % 1000, rng.next() % 50))
            .collect()
    }

    #[test]
    fn parses_shards() {
        assert_eq!("2/4".parse::<Shard>(), Ok(Shard { index: 2, count: 4 }));
        for bad in ["0/4", "5/4", "1/0", "x/2", "3", "", "1/2/3", "-1/2"] {
            let e = bad.parse::<Shard>().unwrap_err().0;
            assert!(e.contains("expected I/N"), "{bad}: {e}");
        }
    }

    #[test]
    fn auto_shards_come_from_the_indexed_job_environment() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                vars.iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        let auto: ShardArg = "auto".parse().unwrap();
        let pod = env(&[("JOB_COMPLETION_INDEX", "2"), ("RUNNER_SHARD_COUNT", "4")]);
        assert_eq!(auto.resolve(None, pod), Ok(Shard { index: 3, count: 4 }));
        assert_eq!(auto.resolve(Some(3), pod), Ok(Shard { index: 3, count: 3 }));
        let e = auto.resolve(Some(2), pod).unwrap_err().0;
        assert!(e.contains("there are 2 shards"), "{e}");
        let e = auto
            .resolve(None, env(&[("JOB_COMPLETION_INDEX", "0")]))
            .unwrap_err()
            .0;
        assert!(e.contains("--shard-count N or RUNNER_SHARD_COUNT"), "{e}");
        let e = auto.resolve(Some(2), env(&[])).unwrap_err().0;
        assert!(
            e.contains("JOB_COMPLETION_INDEX") && e.contains("Indexed Job"),
            "{e}"
        );
        let e = auto
            .resolve(
                None,
                env(&[("JOB_COMPLETION_INDEX", "x"), ("RUNNER_SHARD_COUNT", "2")]),
            )
            .unwrap_err()
            .0;
        assert!(e.contains("expected a number"), "{e}");
        let fixed: ShardArg = "1/2".parse().unwrap();
        assert_eq!(fixed.resolve(None, pod), Ok(Shard { index: 1, count: 2 }));
        assert!(fixed.resolve(Some(3), pod).is_err());
        assert!(
            "0/2"
                .parse::<ShardArg>()
                .unwrap_err()
                .0
                .contains("or `auto`")
        );
    }

    #[test]
    fn property_every_task_in_exactly_one_shard() {
        let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
        for _ in 0..200 {
            let count = (rng.next() % 9 + 1) as u32;
            let n = (rng.next() % 40) as usize;
            let tasks = names(&mut rng, n);
            for t in &tasks {
                let holders: Vec<u32> = (1..=count)
                    .filter(|i| Shard { index: *i, count }.contains(t))
                    .collect();
                assert_eq!(holders.len(), 1, "{t} in shards {holders:?} of {count}");
            }
        }
    }

    #[test]
    fn property_stable_under_reordering_and_additions() {
        let mut rng = XorShift(42);
        for _ in 0..200 {
            let count = (rng.next() % 8 + 1) as u32;
            let n = (rng.next() % 30 + 1) as usize;
            let mut tasks = names(&mut rng, n);
            let before: HashMap<String, u32> = tasks
                .iter()
                .map(|t| (t.clone(), Shard::of(t, count)))
                .collect();
            // Reverse, rotate and add tasks: nobody moves.
            tasks.reverse();
            let k = (rng.next() as usize) % tasks.len();
            tasks.rotate_left(k);
            tasks.extend(names(&mut rng, 5));
            for t in &tasks {
                if let Some(s) = before.get(t) {
                    assert_eq!(Shard::of(t, count), *s, "{t} moved");
                }
            }
        }
    }

    #[test]
    fn shards_are_not_degenerate() {
        let tasks: Vec<String> = (0..400).map(|i| format!("t{i}")).collect();
        for s in 1..=4 {
            let n = tasks.iter().filter(|t| Shard::of(t, 4) == s).count();
            assert!((50..=150).contains(&n), "shard {s} has {n} of 400");
        }
    }
}
