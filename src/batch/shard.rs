//! `--shard i/n`: which tasks one shard runs. A shard is chosen by a hash of the task name, so a
//! task stays in its shard when spec files are reordered or other tasks are added.

use std::str::FromStr;

use sha2::{Digest, Sha256};

/// `--shard i/n`: run the i-th (1-based) of n shards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// 1-based shard index.
    pub index: u32,
    /// Number of shards.
    pub count: u32,
}

impl FromStr for Shard {
    type Err = String;

    fn from_str(s: &str) -> Result<Shard, String> {
        let bad = || format!("invalid shard `{s}`; expected I/N with 1 <= I <= N, e.g. 2/4");
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let index: u32 = i.trim().parse().map_err(|_| bad())?;
        let count: u32 = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
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
            let e = bad.parse::<Shard>().unwrap_err();
            assert!(e.contains("expected I/N"), "{bad}: {e}");
        }
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
