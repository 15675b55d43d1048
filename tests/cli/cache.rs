//! The plan's cache of what each program reads (`.runner/cache/programs.json`): a repeat plan
//! gives the same answer from it, and an edit made right after it was written is seen at once.

use serde_json::Value;

use crate::support::Ws;

fn logstore_to_logagent(plan: &str) -> Vec<String> {
    let plan: Value = serde_json::from_str(plan).unwrap();
    let edge = plan["edges"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["from"] == "logstore" && e["to"] == "logagent")
        .unwrap()
        .clone();
    edge["outputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_repeat_plan_answers_from_the_cache_and_misses_no_edit() {
    let ws = Ws::reference();
    // Files changed less than two seconds before are not cached (timestamps tick coarsely):
    // let the copied workspace settle.
    ws.settle();
    let args = ["show-plan", "-p", "aws", "--format", "json"];
    let first = ws.run(&args).expect(0);
    // Made by show-plan as by a run: private to its owner.
    for dir in [".runner", ".runner/cache"] {
        let mode =
            std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(ws.path().join(dir)).unwrap().permissions());
        assert_eq!(mode & 0o777, 0o700, "{dir}");
    }
    // A header line, then one line per program.
    let cache = std::fs::read_to_string(ws.path().join(".runner/cache/programs.json")).unwrap();
    let entries: Vec<Value> = cache
        .lines()
        .skip(1)
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(entries.len(), 16, "{cache}");
    let logagent = entries
        .iter()
        .find(|e| e["dir"] == "projects/services/logagent")
        .unwrap();
    let logstore = logagent["program"]["refs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["project"] == "logstore")
        .unwrap();
    assert!(!logstore["reads"].as_array().unwrap().is_empty(), "{logagent}");
    let again = ws.run(&args).expect(0);
    assert_eq!(first.stdout, again.stdout);
    assert_eq!(first.stderr, again.stderr);

    // An edit of the same size, right after the cache was written.
    ws.edit(
        "projects/services/logagent/Pulumi.yaml",
        "outputs[\"elastic_hostname\"]",
        "outputs[\"elastic_hostnamX\"]",
    );
    let edited = ws.run(&args).expect(0);
    assert_eq!(
        logstore_to_logagent(&edited.stdout),
        ["elastic_hostnamX", "kibana_hostname"]
    );
    assert!(
        edited
            .stderr
            .contains("reads the output `elastic_hostnamX` of `logstore`"),
        "{}",
        edited.stderr
    );
    // Put back: the first answer again.
    ws.edit(
        "projects/services/logagent/Pulumi.yaml",
        "outputs[\"elastic_hostnamX\"]",
        "outputs[\"elastic_hostname\"]",
    );
    assert_eq!(ws.run(&args).expect(0).stdout, first.stdout);

    // A program the cache knows, gone: the plan says so, as without a cache.
    std::fs::remove_file(ws.path().join("projects/services/logagent/Pulumi.yaml")).unwrap();
    ws.run(&args)
        .expect(2)
        .stderr_has("project `logagent` has no Pulumi.yaml at `projects/services/logagent`");
}
