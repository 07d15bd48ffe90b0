//! Generated repositories shaped like real ones, for the batch and worktree benches.
//!
//! Real projects have many small directories, not a few big ones: rust-lang/cargo has 3,072
//! files in 1,583 directories (median 666 bytes, most files 3 to 7 levels deep), babel/babel
//! 27,674 files in 12,342 directories (median 111 bytes, mostly 6 or 7 levels deep). Creating
//! a directory costs about as much as creating a file, so a tree of 50 files per directory
//! makes checkouts look cheaper than they are. The generator below gives about 2.5 files per
//! directory, depths 2 to 9 weighted like those two projects, and sizes spread log-uniformly
//! from 16 bytes to 16 KB (median about 500 bytes). It is deterministic: the same `files`
//! gives the same tree.

use std::path::{Path, PathBuf};

/// A small deterministic random number generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const WORDS: &[&str] = &[
    "core",
    "util",
    "parser",
    "plugin",
    "test",
    "fixtures",
    "src",
    "lib",
    "types",
    "cli",
    "config",
    "compat",
    "runtime",
    "helpers",
    "transform",
    "generator",
    "output",
    "input",
    "options",
    "babel",
    "cargo",
    "ops",
    "sources",
    "registry",
    "resolver",
    "build",
    "doc",
    "traverse",
    "template",
    "preset",
    "module",
    "exec",
    "misc",
    "regression",
    "spec",
];

const EXTS: &[&str] = &["rs", "js", "ts", "json", "md", "toml", "txt", "mjs", "snap"];

/// Directory depth weights (index = depth of the directory, 1 = a child of the root).
const DEPTH_WEIGHTS: &[usize] = &[0, 1, 3, 6, 8, 10, 14, 12, 3];

/// Write `files` files under `root` (which must exist), plus a `.gitignore` like a project's.
pub fn generate(root: &Path, files: usize) {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ files as u64);
    let mut by_depth: Vec<Vec<PathBuf>> = vec![vec![PathBuf::new()]];
    let total_weight: usize = DEPTH_WEIGHTS.iter().sum();
    std::fs::write(root.join(".gitignore"), "target/\nnode_modules/\n*.log\n").unwrap();
    let mut written = 0;
    let mut dir_no = 0usize;
    while written < files {
        // A new directory at a weighted depth, under a random directory one level up (making
        // the missing levels on the way when there is none yet).
        let mut pick = rng.below(total_weight);
        let mut depth = 1;
        for (d, w) in DEPTH_WEIGHTS.iter().enumerate() {
            if pick < *w {
                depth = d;
                break;
            }
            pick -= w;
        }
        while by_depth.len() < depth {
            let parent = by_depth.last().unwrap()[0].clone();
            dir_no += 1;
            let child = parent.join(format!("{}{dir_no}", WORDS[rng.below(WORDS.len())]));
            by_depth.push(vec![child]);
        }
        let parents = &by_depth[depth - 1];
        let parent = parents[rng.below(parents.len())].clone();
        dir_no += 1;
        let dir = parent.join(format!("{}-{dir_no}", WORDS[rng.below(WORDS.len())]));
        std::fs::create_dir_all(root.join(&dir)).unwrap();
        if by_depth.len() == depth {
            by_depth.push(Vec::new());
        }
        by_depth[depth].push(dir.clone());
        for _ in 0..1 + rng.below(4) {
            if written == files {
                break;
            }
            let ext = EXTS[rng.below(EXTS.len())];
            // log-uniform size in [16, 16384)
            let size = (16.0 * 1024f64.powf(rng.below(1000) as f64 / 1000.0)) as usize;
            let mut body = String::with_capacity(size + 64);
            let mut line = 0;
            while body.len() < size {
                body.push_str(&format!(
                    "export function item_{written}_{line}(x) {{ return x * {line} + {written}; }}\n"
                ));
                line += 1;
            }
            body.truncate(size);
            body.push('\n');
            std::fs::write(root.join(&dir).join(format!("f{written:06}.{ext}")), body).unwrap();
            written += 1;
        }
    }
}
