//! Broken provider files and bad command lines: each error names the file, line and column (or
//! what was asked), says the fix, exits 2, and no later problem hides behind the first.

use crate::support::Ws;

/// A minimal valid provider with three projects, for breaking one thing at a time.
fn small() -> Ws {
    let ws = Ws::empty();
    ws.project("projects/net", "net")
        .project("projects/db", "db")
        .project("projects/app", "app")
        .write(
            "providers/mini.toml",
            r#"description = "A small test provider"

[[project]]
name = "net"
path = "projects/net"
layer = "infra"

[[project]]
name = "db"
path = "projects/db"
layer = "services"
needs = ["net"]

[[project]]
name = "app"
path = "projects/app"
layer = "apps"
needs = ["db"]
"#,
        );
    ws
}

#[test]
fn the_small_provider_is_valid() {
    let ws = small();
    let run = ws.run(&["show-plan", "-p", "mini"]).expect(0);
    // `3 projects in 3 waves`.
    crate::snapshot!(ws.path(), "the_small_provider", run.stdout);
}

#[test]
fn unknown_need_names_file_line_column_and_the_closest_name() {
    let ws = small();
    ws.edit("providers/mini.toml", r#"needs = ["db"]"#, r#"needs = ["dbb"]"#);
    ws.run(&["show-plan", "-p", "mini"])
        .expect(2)
        .stderr_has("providers/mini.toml:18:10: project `app` needs `dbb`, which is not a project of this graph")
        .stderr_has("did you mean `db`?");
}

#[test]
fn a_cycle_is_printed_in_full() {
    let ws = small();
    ws.edit(
        "providers/mini.toml",
        "layer = \"infra\"",
        "layer = \"infra\"\nneeds = [\"app\"]",
    );
    ws.run(&["show-plan", "-p", "mini"])
        .expect(2)
        .stderr_has("providers/mini.toml:7:10: dependency cycle: net → app → db → net")
        .stderr_has("remove or reverse one of the needs");
}

#[test]
fn a_duplicate_project_points_at_both_declarations() {
    let ws = small();
    let text = std::fs::read_to_string(ws.path().join("providers/mini.toml")).unwrap();
    ws.write(
        "providers/mini.toml",
        &format!("{text}\n[[project]]\nname = \"db\"\npath = \"projects/db\"\nlayer = \"services\"\n"),
    );
    ws.run(&["show-plan", "-p", "mini"])
        .expect(2)
        .stderr_has("providers/mini.toml:21:8: project `db` is declared twice")
        .stderr_has("it is first declared at providers/mini.toml:9:8");
}

#[test]
fn a_path_without_pulumi_yaml_is_refused() {
    let ws = small();
    std::fs::remove_file(ws.path().join("projects/db/Pulumi.yaml")).unwrap();
    ws.run(&["show-plan", "-p", "mini"])
        .expect(2)
        .stderr_has("providers/mini.toml:10:8: project `db` has no Pulumi.yaml at `projects/db`")
        .stderr_has("add projects/db/Pulumi.yaml");
}

#[test]
fn an_include_of_a_missing_layer_is_refused_with_the_closest_layer() {
    let ws = Ws::reference();
    ws.edit(
        "providers/aws.toml",
        r#"include = ["kubernetes"]"#,
        r#"include = ["kubernetis"]"#,
    );
    ws.run(&["show-plan", "-p", "aws"])
        .expect(2)
        .stderr_has("providers/aws.toml:4:12: included layer `kubernetis` does not exist")
        .stderr_has("did you mean `kubernetes`?");
}

#[test]
fn every_problem_is_reported_at_once() {
    let ws = Ws::reference();
    ws.edit(
        "providers/aws.toml",
        r#"needs = ["vpc", "iam"]"#,
        r#"needs = ["vcp", "iam"]"#,
    )
    .edit("providers/kubernetes.toml", "layer = \"apps\"", "layer = \"app\"")
    .edit(
        "providers/aws.toml",
        r#"on_success = ["kubeconfig-merge"]"#,
        r#"on_success = ["kubeconfig-merg"]"#,
    );
    let run = ws.run(&["show-plan", "-p", "aws"]).expect(2);
    for needle in [
        "providers/kubernetes.toml:112:9: unknown layer `app`",
        "did you mean `apps`?",
        "providers/aws.toml:35:10: project `eks` needs `vcp`",
        "did you mean `vpc`?",
        "providers/aws.toml:36:15: unknown hook `kubeconfig-merg`",
        "did you mean `kubeconfig-merge`?",
        "3 problems in the workspace files",
    ] {
        assert!(run.stderr.contains(needle), "stderr lacks {needle:?}:\n{}", run.stderr);
    }
}

#[test]
fn toml_syntax_and_unknown_fields_point_at_the_line() {
    let ws = small();
    ws.edit("providers/mini.toml", "needs = [\"net\"]", "nedds = [\"net\"]");
    ws.run(&["show-plan", "-p", "mini"])
        .expect(2)
        .stderr_has("providers/mini.toml:12:1: unknown field `nedds`");
    let ws = small();
    ws.edit("providers/mini.toml", "name = \"app\"", "name = \"app");
    ws.run(&["show-plan", "-p", "mini"])
        .expect(2)
        .stderr_has("providers/mini.toml:15:12: invalid basic string");
}

#[test]
fn an_excluded_project_still_needed_says_how_to_rewire() {
    let ws = Ws::reference();
    ws.edit("providers/kubeconfig.toml", "remove_needs = [\"kic-image-push\"]\n", "");
    ws.run(&["show-plan", "-p", "kubeconfig"])
        .expect(2)
        .stderr_has("project `ingress-controller` needs `kic-image-push`, which is not a project of this graph")
        .stderr_has("`kic-image-push` is excluded at providers/kubeconfig.toml:7:31")
        .stderr_has("remove_needs");
}

#[test]
fn rewiring_an_unknown_project_is_refused() {
    let ws = Ws::reference();
    ws.edit("providers/aws.toml", "[rewire.kubeconfig]", "[rewire.kubeconfg]");
    ws.run(&["show-plan", "-p", "aws"])
        .expect(2)
        .stderr_has("cannot rewire `kubeconfg`: no such project")
        .stderr_has("did you mean `kubeconfig`?");
}

#[test]
fn the_one_provider_of_a_workspace_needs_no_flag_and_counts_read_as_english() {
    let ws = small();
    let run = ws.run(&["show-plan"]).expect(0);
    crate::snapshot!(ws.path(), "the_one_provider_is_named", run.stderr);
    crate::snapshot!(ws.path(), "the_small_provider", run.stdout);
    // One project, one wave (`1 project in 1 wave`): no plural slips.
    let one = ws.run(&["show-plan", "--target", "net"]).expect(0);
    crate::snapshot!(ws.path(), "one_project_in_one_wave", one.stdout);
}

#[test]
fn unknown_or_missing_provider_is_a_usage_error_listing_the_providers() {
    let ws = Ws::reference();
    ws.run(&["show-plan", "-p", "awz"])
        .expect(2)
        .stderr_has("unknown provider `awz`")
        .stderr_has("did you mean `aws`? providers here: aws, do, kubeconfig, linode");
    ws.run(&["show-plan"])
        .expect(2)
        .stderr_has("`show-plan` needs a provider: pass -p/--provider NAME");
    ws.run(&["show-plan", "-p", "kubernetes"])
        .expect(2)
        .stderr_has("`kubernetes` is a shared layer, not a provider");
}

#[test]
fn unknown_target_is_a_usage_error_with_the_closest_project() {
    Ws::reference()
        .run(&["show-plan", "-p", "aws", "--target", "ekss"])
        .expect(2)
        .stderr_has("unknown project `ekss` (given to --target): provider aws has no such project")
        .stderr_has("did you mean `eks`? see the projects with `runner show-plan -p aws`");
}

#[test]
fn bad_flags_and_values_are_usage_errors() {
    let ws = Ws::reference();
    ws.run(&["show-plan", "-p", "aws", "--frobnicate"]).expect(2);
    ws.run(&["show-plan", "-p", "aws", "--format", "png"])
        .expect(2)
        .stderr_has("png");
    ws.run(&["launch"]).expect(2);
}

#[test]
fn list_providers_reports_a_broken_file_but_lists_the_others() {
    let ws = Ws::reference();
    ws.write("providers/broken.toml", "description = \"x\"\nkind = \"thing\"\n");
    let run = ws
        .run(&["list-providers"])
        .expect(2)
        .stderr_has("providers/broken.toml:2:8");
    assert!(run.stdout.contains("aws "), "{}", run.stdout);
}

#[test]
fn secrets_need_exactly_one_store() {
    let ws = Ws::reference();
    ws.edit("providers/kubernetes.toml", "secrets_store = true\n", "");
    ws.run(&["show-plan", "-p", "aws"])
        .expect(2)
        .stderr_has("`prometheus` declares the secret `prometheus:adminpass`, but no project keeps secrets")
        .stderr_has("secrets_store = true");
    let ws = Ws::reference();
    ws.edit(
        "providers/kubernetes.toml",
        "name = \"logstore\"\n",
        "name = \"logstore\"\nsecrets_store = true\n",
    );
    ws.run(&["show-plan", "-p", "aws"])
        .expect(2)
        .stderr_has("are both the secrets store");
}

/// Estimates whose sum along a chain does not fit in 64 bits are an error at the project
/// where the chain overflows, not a wrapped "0 h 00 min" (nor a panic).
#[test]
fn estimates_that_overflow_along_a_chain_are_an_error() {
    let ws = small();
    let huge = i64::MAX.to_string();
    for layer in ["infra", "services", "apps"] {
        ws.edit(
            "providers/mini.toml",
            &format!("layer = \"{layer}\""),
            &format!("layer = \"{layer}\"\nestimate = {huge}"),
        );
    }
    ws.run(&["show-plan", "-p", "mini"])
        .expect(2)
        .stderr_has("providers/mini.toml:17:8: the estimates along net → db → app add up to more than 18446744073709551615 seconds")
        .stderr_has("expected seconds of one run");
    // Two of them still fit, and are shown as they add up.
    ws.edit(
        "providers/mini.toml",
        &format!("estimate = {huge}\nneeds = [\"db\"]"),
        "needs = [\"db\"]",
    );
    let run = ws.run(&["show-plan", "-p", "mini"]).expect(0);
    assert!(run.stdout.contains("about 5124095576030431 h 00 min"), "{}", run.stdout);
}

/// A project named like a flag could never be named on a command line (`--target -net` is two
/// flags): the provider file is refused at the name, with the fix.
#[test]
fn a_project_named_like_a_flag_is_refused_at_its_name() {
    let ws = small();
    ws.project("projects/flag", "-net")
        .edit("providers/mini.toml", "name = \"net\"\n", "name = \"-net\"\n")
        .edit("providers/mini.toml", "needs = [\"net\"]", "needs = [\"-net\"]");
    ws.run(&["show-plan", "-p", "mini"])
        .expect(2)
        .stderr_has(
            "providers/mini.toml:4:8: `-net` starts with `-`: the command line would read it as a flag, so no command could name it",
        )
        .stderr_has("start it with a letter or a digit (`net`)");
}

/// A project both run (`--target`) and left out (`--exclude`) is a contradiction: refused,
/// naming it, before anything is written.
#[test]
fn a_project_both_targeted_and_excluded_is_refused() {
    let ws = Ws::configured("aws");
    for args in [
        &["up", "-p", "aws", "-s", "dev", "--exclude", "vpc", "--target", "vpc"][..],
        &[
            "destroy", "-p", "aws", "-s", "dev", "-t", "eks,vpc", "-x", "vpc", "--yes",
        ],
        &["show-plan", "-p", "aws", "-t", "vpc", "-x", "vpc"],
    ] {
        ws.exec(args, &[])
            .expect(2)
            .stderr_has("`vpc` is given both as --target and as --exclude: it cannot be run and left out");
        assert!(!ws.path().join("config/pulumi/environment").exists(), "{args:?}");
        assert!(!ws.path().join(".runner").exists(), "{args:?}");
    }
}

/// A bidirectional override in a provider file's project name (Trojan-source style): the error
/// names it escaped, in its message and in the file's quoted line, never raw (which would
/// reverse the rest of the terminal line).
#[test]
fn a_bidi_control_in_a_provider_file_is_shown_escaped() {
    let ws = Ws::empty();
    ws.project("projects/p", "p").write(
        "providers/x.toml",
        "name = \"x\"\ndescription = \"d\"\n\n[[project]]\nname = \"id\u{e9}\u{202e}txt\"\npath = \"projects/p\"\nlayer = \"apps\"\n",
    );
    let run = ws.run(&["show-plan", "-p", "x"]).expect(2);
    assert!(run.stderr.contains("id\u{e9}\\u{202e}txt"), "{}", run.stderr);
    assert!(
        !run.stderr.contains('\u{202e}') && !run.stdout.contains('\u{202e}'),
        "{}",
        run.stderr
    );
}
