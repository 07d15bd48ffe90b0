//! The Kubernetes example in examples/k8s/: the Indexed Job's manifest is consistent (shard
//! count = completions, one volume for every pod and the merge job), and its pod script and the
//! merge job's script, run here with `sh` once per completion index (the volume a temporary
//! directory, the image's checkout a test repository), split the tasks into shards whose
//! reports `runner report merge` joins.

use std::path::{Path, PathBuf};
use std::process::Command;

use yaml_serde::Value;

use crate::support::*;

fn manifest(name: &str) -> Value {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples/k8s")
        .join(name);
    yaml_serde::from_str(&std::fs::read_to_string(&p).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn s(v: &Value) -> &str {
    v.as_str().unwrap_or_else(|| panic!("not a string: {v:?}"))
}

/// The pod spec's only container.
fn container(job: &Value) -> &Value {
    let cs = job["spec"]["template"]["spec"]["containers"]
        .as_sequence()
        .unwrap();
    assert_eq!(cs.len(), 1);
    &cs[0]
}

/// The `sh -c` script a container runs.
fn script(job: &Value) -> String {
    let c = container(job);
    assert_eq!(
        c["command"]
            .as_sequence()
            .unwrap()
            .iter()
            .map(s)
            .collect::<Vec<_>>(),
        ["/bin/sh", "-c"]
    );
    s(&c["args"][0]).to_string()
}

/// The claim a job's pods mount at `/reports`.
fn reports_claim(job: &Value) -> String {
    let c = container(job);
    let mount = c["volumeMounts"]
        .as_sequence()
        .unwrap()
        .iter()
        .find(|m| m["mountPath"] == "/reports")
        .expect("a volume at /reports");
    let volume = job["spec"]["template"]["spec"]["volumes"]
        .as_sequence()
        .unwrap()
        .iter()
        .find(|v| v["name"] == mount["name"])
        .expect("the mounted volume");
    s(&volume["persistentVolumeClaim"]["claimName"]).to_string()
}

/// `sh -c SCRIPT` with the test binary's clean environment (`runner` on PATH, pointed at
/// `mock`), `/reports` moved to `reports`, in `dir`.
fn run_script(
    script: &str,
    reports: &Path,
    dir: &Path,
    env: &[(&str, String)],
    mock: &MockAnthropic,
) -> std::process::Output {
    let bin: PathBuf = Path::new(env!("CARGO_BIN_EXE_runner"))
        .parent()
        .unwrap()
        .into();
    let script = script.replace("/reports", reports.to_str().unwrap());
    let mut cmd = Command::new("sh");
    for (k, v) in runner_std_cmd().get_envs() {
        match v {
            Some(v) => cmd.env(k, v),
            None => cmd.env_remove(k),
        };
    }
    let path = std::env::var("PATH").unwrap_or_default();
    cmd.env("PATH", format!("{}:{path}", bin.display()))
        .envs(mock.runner_env())
        .envs(env.iter().map(|(k, v)| (*k, v)))
        .arg("-c")
        .arg(&script)
        .current_dir(dir);
    cmd.output().unwrap()
}

#[test]
fn the_indexed_job_runs_a_shard_per_pod_and_the_merge_job_joins_their_reports() {
    let job = manifest("indexed-job.yaml");
    let merge = manifest("merge-job.yaml");
    let pvc = manifest("reports-pvc.yaml");
    assert_eq!(s(&job["kind"]), "Job");
    assert_eq!(s(&job["spec"]["completionMode"]), "Indexed");
    let completions = job["spec"]["completions"].as_u64().unwrap();
    assert_eq!(job["spec"]["parallelism"].as_u64(), Some(completions));
    let count_var = container(&job)["env"]
        .as_sequence()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "RUNNER_SHARD_COUNT")
        .expect("RUNNER_SHARD_COUNT in the pod");
    assert_eq!(s(&count_var["value"]), completions.to_string());
    let pod_script = script(&job);
    assert!(pod_script.contains("--shard auto"), "{pod_script}");
    let merge_script = script(&merge);
    assert!(
        merge_script.contains("runner report merge"),
        "{merge_script}"
    );
    let claim = s(&pvc["metadata"]["name"]).to_string();
    assert_eq!(reports_claim(&job), claim);
    assert_eq!(reports_claim(&merge), claim);
    assert!(
        pvc["spec"]["accessModes"]
            .as_sequence()
            .unwrap()
            .iter()
            .any(|m| m == "ReadWriteMany")
    );

    // The image's checkout: eight tasks under tasks/nightly.
    let repo = TestRepo::new();
    let nightly = repo.path().join("tasks/nightly");
    std::fs::create_dir_all(&nightly).unwrap();
    for i in 0..8 {
        let n = format!("task-{i}");
        write_spec_named(
            &nightly,
            &format!("{n}.yaml"),
            &named_task(&n, "git:\n  isolate: false\npermissions:\n  mode: plan\n"),
        );
    }
    let mock = MockAnthropic::start((0..8).map(|_| text_turn("ok")).collect());
    let reports = tempfile::tempdir().unwrap();
    for index in 0..completions {
        let out = run_script(
            &pod_script,
            reports.path(),
            repo.path(),
            &[
                ("JOB_COMPLETION_INDEX", index.to_string()),
                ("RUNNER_SHARD_COUNT", completions.to_string()),
            ],
            &mock,
        );
        assert!(
            out.status.success(),
            "pod {index}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            reports
                .path()
                .join(format!("junit-{}.xml", index + 1))
                .is_file()
        );
    }
    assert_eq!(mock.requests().len(), 8, "each task ran once");

    let out = run_script(&merge_script, reports.path(), repo.path(), &[], &mock);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let merged = reports.path().join("junit.xml");
    let text = std::fs::read_to_string(&merged).unwrap();
    let doc = roxmltree::Document::parse(&text).unwrap();
    let mut suites: Vec<&str> = doc
        .root_element()
        .children()
        .filter(|n| n.has_tag_name("testsuite"))
        .map(|n| n.attribute("name").unwrap())
        .collect();
    suites.sort();
    let want: Vec<String> = (0..8).map(|i| format!("task-{i}")).collect();
    assert_eq!(suites, want);
    assert_junit_valid(&merged);
    mock.assert_clean();
}
