//! `runner export` against a hostile checkout and hostile values: symbolic links committed in the
//! output directory (or being it, or a parent of it) that point into the user's home, files the
//! user wrote where an export writes, an output that is a file, a device or git's own directory,
//! a namespace that is shell code, stack values that are CI-engine code. What a user would
//! notice is asserted: the exit code, the message, the files, and that nothing outside the
//! output directory changed.

use std::fmt::Write as _;
use std::os::unix::fs::{PermissionsExt as _, symlink};
use std::path::Path;

use crate::export::{BACKEND, repo_args};
use crate::support::{Run, Ws};

/// A home directory outside the workspace, with a `.profile` the user cares about (0644).
struct Home {
    dir: tempfile::TempDir,
}

const PROFILE: &str = "export PATH=\"$HOME/bin:$PATH\"\n";

impl Home {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(".profile"), PROFILE).unwrap();
        std::fs::set_permissions(dir.path().join(".profile"), std::fs::Permissions::from_mode(0o644)).unwrap();
        Home { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The `.profile` is as it was: content and mode.
    #[track_caller]
    fn untouched(&self) {
        let p = self.path().join(".profile");
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            PROFILE,
            "the link's target was written"
        );
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o644, "the link's target was chmod'ed");
        let names: Vec<_> = std::fs::read_dir(self.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, [".profile"], "nothing else appeared in the home directory");
    }
}

/// `runner export FORMAT -p aws -s dev` with `extra` (the output directory among them), HOME the
/// given one.
fn export(ws: &Ws, home: &Home, format: &str, extra: &[&str]) -> Run {
    let mut args = vec!["export", format, "-p", "aws", "-s", "dev"];
    args.extend(repo_args(format));
    args.extend(extra);
    ws.exec(&args, &[BACKEND, ("HOME", home.path().to_str().unwrap())])
}

fn read(ws: &Ws, rel: &str) -> String {
    std::fs::read_to_string(ws.path().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// What a refused export said, as a person reads it: the workspace's and the home's temporary
/// paths filtered.
#[track_caller]
fn refusal(ws: &Ws, home: &Home, name: &str, said: &str) {
    let said = said.replace(home.path().to_str().unwrap(), "[home]");
    crate::snapshot!(ws.path(), name, said);
}

fn is_link(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink())
}

#[test]
fn a_committed_link_in_the_output_directory_is_refused_and_with_force_replaced_itself() {
    let ws = Ws::configured("aws");
    let home = Home::new();
    let out = ws.path().join("exports/aws-dev/pko");
    std::fs::create_dir_all(&out).unwrap();
    symlink(home.path().join(".profile"), out.join("teardown.sh")).unwrap();

    let run = export(&ws, &home, "pko", &[]).expect(2);
    // A symbolic link (to where), never written through, and what --force does.
    refusal(&ws, &home, "export_refuses_a_link_in_the_output", &run.stderr);
    home.untouched();
    assert!(!out.join("stacks.yaml").exists(), "refused before any file was written");

    let run = export(&ws, &home, "pko", &["--force"]).expect(0);
    home.untouched();
    let teardown = out.join("teardown.sh");
    assert!(!is_link(&teardown), "the link itself was replaced: {}", run.stderr);
    assert!(read(&ws, "exports/aws-dev/pko/teardown.sh").contains("Made by `runner export pko"));
    let mode = std::fs::metadata(&teardown).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o755, "the generated script is executable");

    // A dangling link (its target does not exist yet) is no way out either.
    std::fs::remove_file(out.join("rbac.yaml")).unwrap();
    symlink(home.path().join("planted"), out.join("rbac.yaml")).unwrap();
    export(&ws, &home, "pko", &[])
        .expect(2)
        .stderr_has("exports/aws-dev/pko/rbac.yaml is a symbolic link");
    export(&ws, &home, "pko", &["--force"]).expect(0);
    home.untouched();
    assert!(!is_link(&out.join("rbac.yaml")));
}

#[test]
fn an_output_directory_that_is_a_link_or_under_one_is_refused_even_with_force() {
    let home = Home::new();
    // The output directory itself, a parent inside the repository, a subdirectory the export
    // writes into: each a link into the home directory.
    for (link, format, extra) in [
        ("out", "pko", &["-o", "out", "--force"][..]),
        ("exports", "pko", &["--force"][..]),
        ("exports/aws-dev", "github-actions", &[][..]),
        (
            "exports/aws-dev/github-actions/workflows",
            "github-actions",
            &["--force"][..],
        ),
        ("deploy/manifests", "kebap", &["-o", "deploy"][..]),
    ] {
        let ws = Ws::configured("aws");
        let at = ws.path().join(link);
        std::fs::create_dir_all(at.parent().unwrap()).unwrap();
        symlink(home.path(), &at).unwrap();
        let run = export(&ws, &home, format, extra).expect(2);
        // `LINK is a symbolic link (to [home])`, and the fix: pass the directory it points to as -o.
        let name = format!("export_under_a_linked_{}", link.replace('/', "_"));
        refusal(&ws, &home, &name, &run.stderr);
        home.untouched();
    }
}

#[test]
fn a_file_the_user_wrote_is_not_replaced_without_force() {
    let ws = Ws::configured("aws");
    let home = Home::new();
    ws.write(
        "ci/runner-up.gitlab-ci.yml",
        "# my own pipeline\nbuild:\n  script: [make]\n",
    );
    ws.write("ci/runner-destroy.gitlab-ci.yml", "# mine too\n");
    let run = export(&ws, &home, "gitlab-ci", &["-o", "ci"]).expect(2);
    refusal(&ws, &home, "export_refuses_to_replace_the_users_files", &run.stderr);
    assert_eq!(
        read(&ws, "ci/runner-up.gitlab-ci.yml"),
        "# my own pipeline\nbuild:\n  script: [make]\n"
    );

    // Its own files it overwrites without asking; with --force the user's too.
    std::fs::remove_file(ws.path().join("ci/runner-destroy.gitlab-ci.yml")).unwrap();
    export(&ws, &home, "gitlab-ci", &["-o", "ci"])
        .expect(2)
        .stderr_has("a file was not made by `runner export`");
    export(&ws, &home, "gitlab-ci", &["-o", "ci", "--force"]).expect(0);
    assert!(read(&ws, "ci/runner-up.gitlab-ci.yml").contains("Made by `runner export gitlab-ci"));
    export(&ws, &home, "gitlab-ci", &["-o", "ci"]).expect(0);
}

#[test]
fn files_an_earlier_export_wrote_and_this_one_does_not_are_removed_and_no_others() {
    let ws = Ws::configured("aws");
    let home = Home::new();
    export(&ws, &home, "kebap", &["-o", "deploy", "--source", "program"]).expect(0);
    assert!(ws.path().join("deploy/manifests/02-programs.yaml").is_file());
    // Beside it: the user's notes, and another format's export in the same directory.
    ws.write("deploy/manifests/notes.yaml", "# what we changed by hand\n");
    export(&ws, &home, "backstage", &["-o", "deploy"]).expect(0);

    let run = export(&ws, &home, "kebap", &["-o", "deploy"]).expect(0);
    assert!(
        !ws.path().join("deploy/manifests/02-programs.yaml").exists(),
        "Argo CD would go on syncing the Programs"
    );
    crate::snapshot!(
        ws.path(),
        "export_removes_what_it_wrote_before",
        crate::support::lines_with(&run.stderr, "removed ")
    );
    assert_eq!(read(&ws, "deploy/manifests/notes.yaml"), "# what we changed by hand\n");
    assert!(
        ws.path().join("deploy/catalog-info.yaml").is_file(),
        "another format's file stays"
    );
    assert!(ws.path().join("deploy/manifests/03-stacks.yaml").is_file());
    home.untouched();
}

#[test]
fn an_output_that_is_a_file_a_device_or_inside_git_is_refused_with_what_o_wants() {
    let ws = Ws::configured("aws");
    let home = Home::new();
    ws.write("notes.txt", "mine\n");
    // Each refusal, as said: not a directory, and what -o/--output takes (`-o -` too), or what
    // stands where a directory is needed; inside a git directory (.git).
    let refused = |outputs: &[&str]| {
        let mut said = String::new();
        for output in outputs {
            let run = export(&ws, &home, "pko", &["-o", output]).expect(2);
            write!(said, "-o {output}:\n{}\n", run.stderr).unwrap();
        }
        said
    };
    let said = refused(&["notes.txt", "/dev/null", "notes.txt/pko"]);
    refusal(&ws, &home, "export_into_a_file_or_a_device", &said);
    assert_eq!(read(&ws, "notes.txt"), "mine\n");

    std::fs::create_dir_all(ws.path().join(".git/hooks")).unwrap();
    let said = refused(&[".git", ".git/hooks", "sub/../.git/x", ".GIT"]);
    refusal(&ws, &home, "export_into_git", &said);
    let in_git: Vec<_> = crate::support::files_under(&ws.path().join(".git"));
    assert!(in_git.is_empty(), "nothing written into .git: {in_git:?}");
    home.untouched();
}

#[test]
fn a_namespace_that_is_not_a_dns_1123_label_is_refused_before_anything_is_written() {
    let ws = Ws::configured("aws");
    let home = Home::new();
    let long = "n".repeat(64);
    // Each: the namespace as given, not a Kubernetes namespace name (a DNS-1123 label: lower-case
    // letters, digits and `-`).
    let mut said = String::new();
    for (format, namespace) in [
        ("pko", "$(touch PWN)"),
        ("kebap", "`touch PWN`"),
        ("argo-workflows", "dev;touch PWN"),
        ("pko", "Platform"),
        ("pko", "-platform"),
        ("pko", "a.b"),
        ("pko", long.as_str()),
        ("pko", ""),
    ] {
        let run = export(&ws, &home, format, &[&format!("--namespace={namespace}")]).expect(2);
        write!(said, "{format}:\n{}\n", run.stderr).unwrap();
    }
    refusal(&ws, &home, "export_refuses_a_namespace_that_is_no_label", &said);
    export(&ws, &home, "pko", &["--namespace", "$(touch PWN)"])
        .expect(2)
        .stderr_has("pass a name such as `touch-pwn`");
    assert!(!ws.path().join("exports").exists(), "nothing written");
    assert!(!ws.path().join("PWN").exists());
}

/// Runs the PKO export's `pko/teardown.sh` with `env` (NAMESPACE only when given), beside a
/// `kubectl` that logs each call's words as `[word]`: the calls, one a line.
fn teardown_calls(ws: &Ws, env: &[(&str, &str)]) -> String {
    let bin = ws.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::write(
        bin.join("kubectl"),
        "#!/bin/sh\nfor a in \"$@\"; do printf '[%s]' \"$a\"; done >> \"$LOG\"\necho >> \"$LOG\"\n",
    )
    .unwrap();
    std::fs::set_permissions(bin.join("kubectl"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let log = ws.path().join("kubectl.log");
    let _ = std::fs::remove_file(&log);
    let out = std::process::Command::new(ws.path().join("pko/teardown.sh"))
        .current_dir(ws.path())
        .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .env("LOG", &log)
        .env_remove("NAMESPACE")
        .envs(env.iter().copied())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    std::fs::read_to_string(&log).unwrap()
}

#[test]
fn the_teardown_script_passes_each_value_as_one_word() {
    let ws = Ws::configured("aws");
    let home = Home::new();
    export(&ws, &home, "pko", &["-o", "pko", "--namespace", "platform-1"]).expect(0);
    let teardown = |namespace: Option<&str>| {
        // Exported without --destroy-on-finalize: the script wants the word to go on.
        let mut env = vec![("KEEP_RESOURCES", "yes")];
        env.extend(namespace.map(|n| ("NAMESPACE", n)));
        teardown_calls(&ws, &env)
    };
    let calls = teardown(None);
    let first = calls.lines().next().unwrap();
    assert_eq!(
        first,
        "[delete][stack.pulumi.com][sirius][--namespace][platform-1][--ignore-not-found][--wait=true][--timeout=1h]",
        "{calls}"
    );
    assert_eq!(calls.lines().count(), 16, "{calls}");
    // NAMESPACE overrides the default when the script runs, and stays data.
    let calls = teardown(Some("$(touch PWN)"));
    assert!(
        calls.lines().all(|l| l.contains("[--namespace][$(touch PWN)]")),
        "{calls}"
    );
    assert!(!ws.path().join("PWN").exists());
}

/// The workspace image given to PKO is data in the Stacks, whatever its text: a newline, YAML
/// of its own, a quote read back as the one string given; a TIMEOUT given to the teardown is one
/// word of kubectl's, never run.
#[test]
fn a_hostile_image_or_timeout_stays_one_value() {
    let ws = Ws::configured("aws");
    let home = Home::new();
    let image = "reg.example/p:1\nworkspaceTemplate: {spec: {image: evil}}\n'\"#x";
    export(
        &ws,
        &home,
        "pko",
        &["-o", "pko", "--image", image, "--destroy-on-finalize"],
    )
    .expect(0);
    for stack in crate::export::docs(&read(&ws, "pko/stacks.yaml")) {
        assert_eq!(stack["spec"]["workspaceTemplate"]["spec"]["image"], image, "{stack}");
    }
    let calls = teardown_calls(&ws, &[("TIMEOUT", "$(touch PWN) 1h")]);
    assert!(
        calls
            .lines()
            .filter(|l| l.starts_with("[delete][stack.pulumi.com]"))
            .all(|l| l.ends_with("[--timeout=$(touch PWN) 1h]")),
        "{calls}"
    );
    assert!(!ws.path().join("PWN").exists());
}

#[test]
fn a_project_named_pages_is_not_gitlabs_pages_job() {
    let ws = Ws::configured("kubeconfig");
    let home = Home::new();
    ws.project("projects/apps/pages", "pages");
    let text = std::fs::read_to_string(ws.path().join("providers/kubeconfig.toml")).unwrap();
    ws.write(
        "providers/kubeconfig.toml",
        &format!("{text}\n[[project]]\nname = \"pages\"\npath = \"projects/apps/pages\"\nlayer = \"apps\"\nafter = [\"sirius\"]\n"),
    );
    let args = ["export", "gitlab-ci", "-p", "kubeconfig", "-s", "dev", "-o", "ci"];
    let run = ws
        .exec(&args, &[BACKEND, ("HOME", home.path().to_str().unwrap())])
        .expect(0);
    crate::snapshot!(
        ws.path(),
        "export_renames_a_project_named_pages",
        crate::support::lines_with(&run.stderr, "name: ")
    );
    for file in ["ci/runner-up.gitlab-ci.yml", "ci/runner-destroy.gitlab-ci.yml"] {
        let pipeline = &crate::export::docs(&read(&ws, file))[0];
        assert!(pipeline.get("pages").is_none(), "{file}: a job named pages");
        let job = &pipeline["pages-project"];
        assert!(
            job["script"][0].as_str().unwrap().contains("--only pages "),
            "{file}: {job}"
        );
    }
}

/// Stack values that are code to a CI engine's own templating: GitHub expressions (one of them
/// not even closed), GitLab variables, Argo template tags and expressions, all in one value too.
const ENGINE_CODE: [(&str, &str); 8] = [
    ("app:github_secret", "${{ secrets.AWS_SECRET_ACCESS_KEY }}"),
    ("app:github_token", "token=${{ github.token }}"),
    ("app:github_open", "${{ not closed"),
    ("app:gitlab_variable", "$CI_JOB_TOKEN"),
    ("app:gitlab_braced", "x${CI_JOB_TOKEN}y $$ $"),
    ("app:argo_tag", "{{workflow.name}}"),
    ("app:argo_expression", "{{=sprig.env('HOME')}}"),
    ("app:all", "one ${{ secrets.X }}\ntwo $HOME {{workflow.uid}} '${{' }}\n"),
];

/// The aws workspace with [`ENGINE_CODE`] in its stack file.
fn with_engine_code() -> Ws {
    let ws = Ws::configured("aws");
    let mut lines = String::from("config:\n");
    for (key, value) in ENGINE_CODE {
        let _ = writeln!(lines, "  {key}: {}", serde_json::to_string(value).unwrap());
    }
    ws.edit("config/pulumi/Pulumi.dev.yaml", "config:\n", &lines);
    ws
}

/// The stack file a job writes, as data: every value of [`ENGINE_CODE`] must be there as written.
#[track_caller]
fn holds_the_values_as_written(stack_file: &str, engine: &str) {
    let doc: serde_json::Value = serde_saphyr::from_str(stack_file)
        .unwrap_or_else(|e| panic!("{engine}: the stack file is not YAML ({e}):\n{stack_file}"));
    for (key, value) in ENGINE_CODE {
        assert_eq!(doc["config"][key], value, "{engine}: {key} in\n{stack_file}");
    }
    assert_eq!(doc["config"]["aws:region"], "us-east-1", "{engine}");
}

#[test]
fn github_reads_every_stack_value_as_text_and_actionlint_accepts_the_workflows() {
    let ws = with_engine_code();
    let home = Home::new();
    export(&ws, &home, "github-actions", &["-o", "gh"]).expect(0);
    let escape = "${{ '${{' }}";
    for file in ["gh/workflows/runner-up.yml", "gh/workflows/runner-destroy.yml"] {
        let workflow = &crate::export::docs(&read(&ws, file))[0];
        let value = workflow["env"]["MARA_STACK_CONFIG"].as_str().unwrap();
        // GitHub evaluates each `${{ … }}`: the only ones in the value are the escape, an
        // expression whose value is the string `${{`.
        let mut rest = value;
        while let Some(at) = rest.find("${{") {
            assert!(
                rest[at..].starts_with(escape),
                "{file}: an expression at\n{}",
                &rest[at..]
            );
            rest = &rest[at + escape.len()..];
        }
        holds_the_values_as_written(&value.replace(escape, "${{"), file);
    }

    // What the runner wrote was checked above: only the linter's own reading may skip.
    let Some(actionlint) = crate::support::tool("actionlint") else {
        return;
    };
    let lint = |dir: &Path| {
        std::process::Command::new(&actionlint)
            .args(["-no-color", "-shellcheck=", "-pyflakes="])
            .arg(dir.join("workflows/runner-up.yml"))
            .arg(dir.join("workflows/runner-destroy.yml"))
            .output()
            .unwrap()
    };
    let out = lint(&ws.path().join("gh"));
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // The same workflows with the values pasted as they are: actionlint reads them as GitHub
    // expressions (one is not closed: an error), so its yes above means something.
    let raw = ws.path().join("raw/workflows");
    std::fs::create_dir_all(&raw).unwrap();
    for name in ["runner-up.yml", "runner-destroy.yml"] {
        let text = read(&ws, &format!("gh/workflows/{name}")).replace(escape, "${{");
        std::fs::write(raw.join(name), text).unwrap();
    }
    let out = lint(&ws.path().join("raw"));
    assert!(!out.status.success(), "actionlint took the values as expressions");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("[expression]"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn gitlab_reads_the_stack_values_raw_as_gitlab_ci_local_shows() {
    let ws = with_engine_code();
    let home = Home::new();
    export(&ws, &home, "gitlab-ci", &["-o", "gl"]).expect(0);
    let pipeline = &crate::export::docs(&read(&ws, "gl/runner-up.gitlab-ci.yml"))[0];
    let variable = &pipeline["variables"]["MARA_STACK_CONFIG"];
    assert_eq!(variable["expand"], false, "{variable}");
    let text = variable["value"].as_str().unwrap();
    holds_the_values_as_written(text, "gitlab-ci");

    // What the runner wrote was checked above: only gitlab-ci-local's own reading may skip.
    let Some(gcl) = crate::support::tool("gitlab-ci-local") else {
        return;
    };
    let repo = ws.path().join("gitlab-repo");
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::copy(
        ws.path().join("gl/runner-up.gitlab-ci.yml"),
        repo.join(".gitlab-ci.yml"),
    )
    .unwrap();
    let git = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&repo)
        .status()
        .unwrap();
    assert!(git.success());
    let out = std::process::Command::new(&gcl)
        .arg("--preview")
        .current_dir(&repo)
        .env("HOME", home.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    // gitlab-ci-local writes a raw value with each `$` doubled (`$$` is GitLab's literal `$`);
    // a value GitLab would expand keeps its `$VAR` as it is.
    let preview: serde_json::Value = serde_saphyr::from_str(&stdout).unwrap();
    let shown = preview["variables"]["MARA_STACK_CONFIG"].as_str().unwrap();
    assert_eq!(shown, text.replace('$', "$$"), "GitLab would expand part of it");
}

#[test]
fn argo_sees_no_template_tag_of_a_stack_value() {
    let ws = with_engine_code();
    let home = Home::new();
    export(&ws, &home, "argo-workflows", &["-o", "argo"]).expect(0);
    for file in ["argo/workflow-up.yaml", "argo/workflow-destroy.yaml"] {
        let workflow = &crate::export::docs(&read(&ws, file))[0];
        // Argo replaces `{{…}}` in the template as JSON, more than once: the only tags there are
        // the task's own parameter and the teardown's confirmation.
        let json = serde_json::to_string(workflow).unwrap();
        let tags: Vec<&str> = json
            .match_indices("{{")
            .map(|(at, _)| &json[at..at + 40.min(json.len() - at)])
            .collect();
        assert!(
            tags.iter()
                .all(|t| t.starts_with("{{inputs.parameters.project}}")
                    || t.starts_with("{{workflow.parameters.confirm}}")),
            "{file}: {tags:?}"
        );
        let env = workflow["spec"]["templates"][1]["container"]["env"].as_array().unwrap();
        let config = env.iter().find(|e| e["name"] == "MARA_STACK_CONFIG").unwrap();
        holds_the_values_as_written(config["value"].as_str().unwrap(), file);
    }
    // A value the Workflow holds as it is cannot be escaped there: refused, naming it.
    let run = ws.exec(
        &["export", "argo-workflows", "-p", "aws", "-s", "dev", "-o", "argo2"]
            .into_iter()
            .chain(repo_args("argo-workflows").iter().copied())
            .collect::<Vec<_>>(),
        &[("PULUMI_BACKEND_URL", "s3://state-{{workflow.name}}")],
    );
    run.expect(2).stderr_has(
        "PULUMI_BACKEND_URL \"s3://state-{{workflow.name}}\" holds `{{`, which Argo Workflows reads as a template tag",
    );
    assert!(!ws.path().join("argo2").exists());
}

/// A URL setting with a user and password in it (`kubernetes:chart_mirror`, a program's
/// `sirius:tracing_endpoint`): no export writes it (each format refused before any file, the key
/// named, the password never shown), and `validate` says the same.
#[test]
fn a_password_in_a_url_setting_is_written_into_no_export() {
    let ws = Ws::configured("aws");
    let home = Home::new();
    let file = ws.path().join("config/pulumi/Pulumi.dev.yaml");
    let text = std::fs::read_to_string(&file).unwrap();
    for (key, url, credential) in [
        (
            "kubernetes:chart_mirror",
            "https://robot:S3cret-pw@charts.example/helm",
            "a user and password",
        ),
        (
            "sirius:tracing_endpoint",
            "https://ann:S3cret-pw@otel.example:4318",
            "a user and password",
        ),
        (
            "kubernetes:chart_mirror",
            "https://harbor.example/chartrepo/bos?token=S3cret-tok",
            "the query parameter `token`",
        ),
    ] {
        std::fs::write(&file, format!("{text}  {key}: {url}\n")).unwrap();
        for format in ["pko", "github-actions", "gitlab-ci", "argo-workflows"] {
            let out = ws.path().join(format!("out-{format}"));
            let run = export(&ws, &home, format, &["-o", out.to_str().unwrap()]).expect(3);
            assert!(
                run.stderr
                    .contains(&format!("`{key}` is a URL with {credential} in it")),
                "{format}: {}",
                run.stderr
            );
            assert!(
                !run.stderr.contains("S3cret") && !run.stdout.contains("S3cret"),
                "{}",
                run.stderr
            );
            assert!(!out.exists(), "{format} wrote {}", out.display());
        }
        let validate = ws.exec(&["validate", "-p", "aws", "-s", "dev"], &[]).expect(3);
        assert!(
            validate
                .stderr
                .contains(&format!("`{key}` is a URL with {credential} in it")),
            "{}",
            validate.stderr
        );
        assert!(!validate.stderr.contains("S3cret"), "{}", validate.stderr);
    }
    home.untouched();
}

/// `kubernetes:chart_mirror` is a URL Helm reads a repository from: another scheme
/// (`file:`, `javascript:`) is refused where the file is read, naming what it takes.
#[test]
fn a_chart_mirror_that_is_no_repository_url_is_refused() {
    let ws = Ws::configured("aws");
    let file = ws.path().join("config/pulumi/Pulumi.dev.yaml");
    let text = std::fs::read_to_string(&file).unwrap();
    for bad in ["file:///etc/passwd", "javascript:alert(1)", "https://"] {
        std::fs::write(&file, format!("{text}  kubernetes:chart_mirror: \"{bad}\"\n")).unwrap();
        ws.exec(&["validate", "-p", "aws", "-s", "dev"], &[])
            .expect(3)
            .stderr_has("`kubernetes:chart_mirror` is")
            .stderr_has("not an http://, https:// or oci:// URL");
        // Nor written into an export, which every job would refuse.
        let home = Home::new();
        let out = ws.path().join("out");
        export(&ws, &home, "pko", &["-o", out.to_str().unwrap()])
            .expect(3)
            .stderr_has("not an http://, https:// or oci:// URL");
        assert!(!out.exists());
    }
    std::fs::write(
        &file,
        format!("{text}  kubernetes:chart_mirror: oci://registry.example/charts\n"),
    )
    .unwrap();
    ws.exec(&["validate", "-p", "aws", "-s", "dev"], &[]).expect(0);
}
