//! The resource a run's telemetry describes: the service, and the CI job or Kubernetes pod it
//! runs in when their variables say so.

use opentelemetry::KeyValue;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::resource::{EnvResourceDetector, TelemetryResourceDetector};

/// The service name when neither `OTEL_SERVICE_NAME` nor `OTEL_RESOURCE_ATTRIBUTES` names one.
const SERVICE_NAME: &str = "runner";

/// Attributes the environment's CI and Kubernetes variables give, read through `var`.
pub(crate) fn detected(var: &impl Fn(&str) -> Option<String>) -> Vec<KeyValue> {
    let mut out = Vec::new();
    let mut add = |key: &'static str, name: &str| {
        if let Some(v) = var(name).filter(|v| !v.is_empty()) {
            out.push(KeyValue::new(key, v));
        }
    };
    // GitHub Actions, in the CI/CD semantic conventions and under their own names.
    add("cicd.pipeline.name", "GITHUB_WORKFLOW");
    add("cicd.pipeline.run.id", "GITHUB_RUN_ID");
    add("cicd.pipeline.task.name", "GITHUB_JOB");
    add("vcs.repository.name", "GITHUB_REPOSITORY");
    add("github.repository", "GITHUB_REPOSITORY");
    add("github.run_id", "GITHUB_RUN_ID");
    add("github.run_attempt", "GITHUB_RUN_ATTEMPT");
    add("github.workflow", "GITHUB_WORKFLOW");
    add("github.job", "GITHUB_JOB");
    // Kubernetes: an indexed Job's completion index, and the pod (its name is the hostname
    // unless the pod spec passes it down as POD_NAME).
    add("k8s.job.completion_index", "JOB_COMPLETION_INDEX");
    add("k8s.pod.name", "POD_NAME");
    add("k8s.namespace.name", "POD_NAMESPACE");
    let in_pod = var("KUBERNETES_SERVICE_HOST").is_some();
    if in_pod && var("POD_NAME").is_none() {
        add("k8s.pod.name", "HOSTNAME");
    }
    out
}

/// The resource: runner's name and version and what [`detected`] finds, overridden by
/// `OTEL_RESOURCE_ATTRIBUTES` and then `OTEL_SERVICE_NAME`.
pub(crate) fn build(version: &str, var: &impl Fn(&str) -> Option<String>) -> Resource {
    let mut b = Resource::builder_empty()
        .with_service_name(SERVICE_NAME)
        .with_attribute(KeyValue::new("service.version", version.to_string()))
        .with_attributes(detected(var))
        .with_detector(Box::new(TelemetryResourceDetector))
        .with_detector(Box::new(EnvResourceDetector::new()));
    if let Some(name) = var("OTEL_SERVICE_NAME").filter(|v| !v.is_empty()) {
        b = b.with_service_name(name);
    }
    b.build()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn github_and_kubernetes_variables_become_attributes() {
        let vars = [
            ("GITHUB_REPOSITORY", "o/r"),
            ("GITHUB_RUN_ID", "42"),
            ("GITHUB_WORKFLOW", "ci"),
            ("GITHUB_JOB", "agent"),
            ("JOB_COMPLETION_INDEX", "3"),
            ("KUBERNETES_SERVICE_HOST", "10.0.0.1"),
            ("HOSTNAME", "pod-3"),
        ];
        let var = |n: &str| {
            vars.iter()
                .find(|(k, _)| *k == n)
                .map(|(_, v)| v.to_string())
        };
        let got: Vec<(String, String)> = detected(&var)
            .into_iter()
            .map(|kv| (kv.key.to_string(), kv.value.to_string()))
            .collect();
        for want in [
            ("github.repository", "o/r"),
            ("cicd.pipeline.run.id", "42"),
            ("github.workflow", "ci"),
            ("github.job", "agent"),
            ("k8s.job.completion_index", "3"),
            ("k8s.pod.name", "pod-3"),
        ] {
            assert!(
                got.contains(&(want.0.to_string(), want.1.to_string())),
                "{want:?} in {got:?}"
            );
        }
        assert!(detected(&|_: &str| None).is_empty());
    }
}
