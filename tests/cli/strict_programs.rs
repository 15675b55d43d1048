//! The programs against the provider SDKs they pin: the pins themselves, `scripts/check-programs`
//! on every program and on each broken fixture, and the stand-in refusing, through the runner,
//! what the real engine refuses (from the schema the SDKs export). Both are one type checker, the
//! stand-in's (`pulumi_standin::check`): `check-programs` words each problem in one line, with
//! the engine's message.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::support::{REPO, Run, Ws, tool};
use test_requires::requires;

/// `scripts/provider-versions` (the stand-in's reader): package → its pin.
fn pins() -> BTreeMap<String, pulumi_standin::workspace::pins::Pin> {
    pulumi_standin::workspace::pins::read(
        &Path::new(REPO).join("scripts/provider-versions"),
        "scripts/provider-versions",
    )
    .unwrap_or_else(|e| panic!("{e}"))
    .into_iter()
    .map(|p| (p.name.clone(), p))
    .collect()
}

/// `@pulumi/aws@7.48.0`, as the checker names the SDK it read.
fn sdk_of(package: &str) -> String {
    pins()[package].sdk_at_version()
}

fn programs_under(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            programs_under(&p, out);
        } else if p.file_name().is_some_and(|n| n == "Pulumi.yaml") {
            out.push(p);
        }
    }
}

/// The package of a resource type or function token (`pulumi:providers:aws` → `aws`).
fn package_of(token: &str) -> &str {
    match token.strip_prefix("pulumi:providers:") {
        Some(pkg) => pkg,
        None => token.split(':').next().unwrap_or_default(),
    }
}

/// Every `fn::invoke` in a value: (function, options.version).
fn invokes(v: &Value, out: &mut Vec<(String, Option<String>)>) {
    match v {
        Value::Object(m) => {
            if let Some(inv) = m.get("fn::invoke") {
                out.push((
                    inv["function"].as_str().unwrap_or_default().to_string(),
                    inv["options"]["version"].as_str().map(str::to_string),
                ));
            }
            m.values().for_each(|x| invokes(x, out));
        }
        Value::Array(a) => a.iter().for_each(|x| invokes(x, out)),
        _ => {}
    }
}

#[test]
fn every_program_pins_each_provider_package_it_uses_to_the_listed_version() {
    let pins = pins();
    let mut programs = Vec::new();
    programs_under(&Path::new(REPO).join("projects"), &mut programs);
    assert!(programs.len() >= 30, "found only {} programs", programs.len());
    let mut problems = Vec::new();
    let mut pinned = 0;
    for p in &programs {
        let doc: Value = serde_saphyr::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
        let rel = p.strip_prefix(REPO).unwrap().display().to_string();
        let mut uses: Vec<(String, String, Option<String>)> = Vec::new();
        for (name, r) in doc["resources"].as_object().into_iter().flatten() {
            let ty = r["type"].as_str().unwrap_or_default();
            if !ty.starts_with("pulumi:pulumi:") {
                uses.push((
                    format!("resource `{name}`"),
                    ty.to_string(),
                    r["options"]["version"].as_str().map(str::to_string),
                ));
            }
        }
        let mut inv = Vec::new();
        invokes(&doc, &mut inv);
        uses.extend(inv.into_iter().map(|(f, v)| (format!("fn::invoke of {f}"), f, v)));
        for (what, token, version) in uses {
            let pkg = package_of(&token);
            match (pins.get(pkg), version) {
                (None, _) => problems.push(format!(
                    "{rel}: {what} uses `{pkg}`, which scripts/provider-versions does not list"
                )),
                (Some(pin), Some(v)) if v == pin.version => pinned += 1,
                (Some(pin), got) => problems.push(format!("{rel}: {what}: version {got:?}, pinned {}", pin.version)),
            }
        }
    }
    assert!(
        problems.is_empty(),
        "{} unpinned:\n{}",
        problems.len(),
        problems.join("\n")
    );
    assert!(pinned >= 71, "only {pinned} pinned resources and invokes");
}

#[test]
fn the_docs_list_exactly_the_pinned_versions() {
    let doc = std::fs::read_to_string(Path::new(REPO).join("docs/providers.md")).unwrap();
    let table = doc
        .split("<!-- provider-versions:start -->")
        .nth(1)
        .and_then(|r| r.split("<!-- provider-versions:end -->").next())
        .expect("docs/providers.md has the provider-versions table between its markers");
    let listed: BTreeMap<String, String> = table
        .lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            let name = cells.get(1)?.strip_prefix('`')?.strip_suffix('`')?;
            Some((name.to_string(), (*cells.get(2)?).to_string()))
        })
        .collect();
    let pinned: BTreeMap<String, String> = pins().into_iter().map(|(k, p)| (k, p.version)).collect();
    assert_eq!(
        listed, pinned,
        "docs/providers.md's table and scripts/provider-versions differ"
    );
}

fn check_programs(args: &[&str]) -> Run {
    let out = Command::new(Path::new(REPO).join("scripts/check-programs"))
        .args(args)
        .current_dir(REPO)
        .output()
        .expect("scripts/check-programs runs (it builds the stand-in's check-programs with cargo)");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

/// What is no program is said as such, naming it: a FIFO or a device (never read: it could
/// block), a file that is not UTF-8, a YAML file that is no project file (a Helm values file).
#[requires("sdk-schema")]
#[test]
fn check_programs_refuses_what_is_no_program_naming_it() {
    let Some(_) = tool("sdk-schema") else { return };
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("gate.yaml");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let latin1 = dir.path().join("Pulumi.yaml");
    std::fs::write(&latin1, b"name: caf\xe9\nruntime: yaml\n").unwrap();
    let list = dir.path().join("list.yaml");
    std::fs::write(&list, "- name: a\n- runtime: yaml\n").unwrap();
    let values = dir.path().join("values.yaml");
    std::fs::write(&values, "replicas: 2\n").unwrap();
    let empty = tempfile::tempdir().unwrap();
    // What each is said to be (not a file or a directory, not UTF-8 text, not a Pulumi project
    // file and why, no Pulumi.yaml under it), and the exit code: 2 for what cannot be checked, 1
    // for a file that is no program.
    let mut said = String::new();
    for (path, code) in [
        (fifo.as_path(), 2),
        (Path::new("/dev/null"), 2),
        (&latin1, 2),
        (&list, 1),
        (&values, 1),
        (empty.path(), 2),
    ] {
        let run = check_programs(&[path.to_str().unwrap()]).expect(code);
        write!(said, "{code}: {}{}", run.stdout, run.stderr).unwrap();
    }
    let said = said.replace(empty.path().to_str().unwrap(), "[empty]");
    crate::snapshot!(dir.path(), "check_programs_of_what_is_no_program", said);
}

/// A folder walked as found: a FIFO named `Pulumi.yaml` is left unread (said), a loop of links
/// and a link to `..` end, a link to `/dev/zero` is never read, and a program reached by many
/// names is checked (and fixed) once.
#[requires("sdk-schema")]
#[test]
fn check_programs_walks_each_real_file_once_and_reads_only_regular_files() {
    let Some(_) = tool("sdk-schema") else { return };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for d in ["a", "fifo", "zero"] {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    std::fs::copy(
        Path::new(REPO).join("examples/local/projects/identity/identity/Pulumi.yaml"),
        root.join("a/Pulumi.yaml"),
    )
    .unwrap();
    assert!(
        Command::new("mkfifo")
            .arg(root.join("fifo/Pulumi.yaml"))
            .status()
            .unwrap()
            .success()
    );
    std::os::unix::fs::symlink("/dev/zero", root.join("zero/Pulumi.yaml")).unwrap();
    std::os::unix::fs::symlink("..", root.join("a/up")).unwrap();
    std::os::unix::fs::symlink("loop2", root.join("loop1")).unwrap();
    std::os::unix::fs::symlink("loop1", root.join("loop2")).unwrap();
    std::os::unix::fs::symlink("a", root.join("again")).unwrap();
    // A link out to another file system: not walked (through /proc/1/root a walk reaches `/`).
    std::os::unix::fs::symlink("/proc", root.join("a/proc")).unwrap();
    let run = std::thread::scope(|s| {
        let h = s.spawn(|| check_programs(&[root.to_str().unwrap()]));
        crate::support::wait_until(
            std::time::Duration::from_secs(120),
            "check-programs never ended",
            || h.is_finished(),
        );
        h.join().unwrap()
    })
    .expect(0);
    // The FIFO and the device not read, /proc not walked, the one program counted once.
    crate::snapshot!(dir.path(), "check_programs_walks_each_real_file_once", run.stderr);
}

#[test]
fn check_programs_without_the_sdk_cache_says_how_to_install_it() {
    let empty = tempfile::tempdir().unwrap();
    let out = Command::new(Path::new(REPO).join("scripts/check-programs"))
        .current_dir(REPO)
        .env("RUNNER_SDK_CACHE", empty.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    crate::snapshot!(empty.path(), "check_programs_without_the_sdk_cache", stderr);
}

#[requires("sdk-schema")]
#[test]
fn check_programs_passes_on_every_program() {
    let Some(_) = tool("sdk-schema") else { return };
    let run = check_programs(&[]).expect(0);
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    assert!(
        run.stderr.contains("31 programs match the pinned SDKs"),
        "{}",
        run.stderr
    );
}

/// Each broken fixture: its directory, the line of its mistake, what the report must say.
fn broken() -> Vec<(&'static str, u32, Vec<String>)> {
    let aws = sdk_of("aws");
    let awsx = sdk_of("awsx");
    vec![
        ("unknown-type", 6, vec![
            "unable to find resource type \"aws:s3/bukket:Bucket\" in resource provider \"aws\"".into(),
            "did you mean `aws:s3/bucket:Bucket`?".into(),
            format!("checked against the resource types of {aws}"),
        ]),
        ("unknown-property", 9, vec![
            "Property imageScanningConfig does not exist on 'aws:ecr/repository:Repository'".into(),
            "Existing properties are: imageScanningConfiguration".into(),
            format!("checked against aws:ecr/repository:Repository in {aws}"),
        ]),
        ("missing-required", 8, vec![
            "Missing required property 'assumeRolePolicy'".into(),
            format!("checked against aws:iam/role:Role in {aws}"),
        ]),
        ("unknown-output", 12, vec![
            "repositoryUri does not exist on repository".into(),
            "did you mean `repositoryUrl`?".into(),
            format!("checked against aws:ecr/repository:Repository in {aws}"),
        ]),
        ("bad-option", 17, vec![
            "dependOn does not exist on resource options".into(),
            "did you mean `dependsOn`?".into(),
            "checked against the Pulumi YAML resource options".into(),
        ]),
        ("wrong-shape", 9, vec![
            "imageScanningConfiguration: Cannot assign 'List<{scanOnPush: boolean}>' to 'ecr.RepositoryImageScanningConfiguration'".into(),
            format!("checked against aws:ecr/repository:Repository in {aws}"),
        ]),
        ("bad-enum", 10, vec![
            "natGateways: Cannot assign '{strategy: string}' to 'ec2.NatGatewayConfigurationArgs': strategy: Allowed values are \"None\", \"Single\", \"OnePerAz\"".into(),
            format!("checked against awsx:ec2:Vpc in {awsx}"),
        ]),
        ("undefined-name", 12, vec![
            "resource, variable, or config value \"repoo\" not found".into(),
            "checked against the names this program declares".into(),
        ]),
        ("wrong-pin", 10, vec![
            format!("resource `repository` pins aws 6.0.0, scripts/provider-versions pins {}", pins()["aws"].version),
        ]),
        ("unknown-function", 7, vec![
            "unable to find function \"aws:index/getCallerIdentities:getCallerIdentities\" in resource provider \"aws\"".into(),
            "did you mean `aws:index/getCallerIdentity:getCallerIdentity`?".into(),
            format!("checked against the functions of {aws}"),
        ]),
    ]
}

#[requires("sdk-schema")]
#[test]
fn check_programs_fails_on_each_broken_fixture_with_its_line_and_the_sdk_type() {
    let Some(_) = tool("sdk-schema") else { return };
    for (fixture, line, needles) in broken() {
        let dir = format!("tests/fixtures/broken-programs/{fixture}");
        let run = check_programs(&[&dir]);
        assert_eq!(
            run.code, 1,
            "{fixture}: exit {}\n{}{}",
            run.code, run.stdout, run.stderr
        );
        let lines: Vec<&str> = run.stdout.lines().collect();
        assert_eq!(lines.len(), 1, "{fixture}: one problem expected:\n{}", run.stdout);
        let prefix = format!("{dir}/Pulumi.yaml:{line}: ");
        assert!(
            lines[0].starts_with(&prefix),
            "{fixture}: expected {prefix:?}…, got\n{}",
            lines[0]
        );
        for needle in needles {
            assert!(lines[0].contains(&needle), "{fixture}: lacks {needle:?}:\n{}", lines[0]);
        }
    }
}

#[requires("sdk-schema")]
#[test]
fn check_programs_fix_writes_the_pins_into_a_program_that_lacks_them() {
    use std::os::unix::fs::PermissionsExt as _;
    let Some(_) = tool("sdk-schema") else { return };
    let dir = tempfile::tempdir().unwrap();
    let program = dir.path().join("Pulumi.yaml");
    std::fs::write(
        &program,
        "name: unpinned\nruntime: yaml\nresources:\n  repository:\n    type: aws:ecr/repository:Repository\n    properties:\n      forceDelete: true\noutputs:\n  url: ${repository.repositoryUrl}\n",
    )
    .unwrap();
    // Named through a link, a mode of its own: both stay as they were after the fix.
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o640)).unwrap();
    let link = dir.path().join("linked.yaml");
    std::os::unix::fs::symlink(&program, &link).unwrap();
    let path = link.to_str().unwrap();
    check_programs(&[path])
        .expect(1)
        .stdout
        .contains("resource `repository` does not pin aws; add `options: {version: ")
        .then_some(())
        .expect("the missing pin is reported");
    check_programs(&["--fix", path]).expect(0);
    assert!(
        std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(),
        "the link stays a link"
    );
    let mode = std::fs::metadata(&program).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o640, "the program keeps its mode");
    let fixed = std::fs::read_to_string(&program).unwrap();
    let pin = &pins()["aws"].version;
    assert!(
        fixed.contains(&format!(
            "      forceDelete: true\n    options:\n      version: {pin}\noutputs:"
        )),
        "{fixed}"
    );
}

/// `runner preview` of the AWS graph with one program edited: exit 1, and the engine's message.
fn preview_with(edit: (&str, &str, &str)) -> Run {
    let ws = Ws::configured("aws");
    ws.edit(edit.0, edit.1, edit.2);
    let run = ws.exec(&["preview", "-p", "aws", "-s", "dev", "--target", "ecr"], &[]);
    assert_eq!(
        run.code, 1,
        "exit {}\n--- stdout\n{}\n--- stderr\n{}",
        run.code, run.stdout, run.stderr
    );
    run
}

#[requires("sdk-schema")]
#[test]
fn runner_preview_of_a_program_the_engine_refuses_fails_with_the_engines_message() {
    let Some(_) = tool("sdk-schema") else { return };
    let ecr = "projects/infra/ecr/Pulumi.yaml";
    let cases = [
        (
            (ecr, "      imageScanningConfiguration:", "      imageScanningConfig:"),
            vec![
                "Error: Property imageScanningConfig does not exist on 'aws:ecr/repository:Repository'",
                "on Pulumi.yaml line 10:",
                "Existing properties are: imageScanningConfiguration",
            ],
        ),
        (
            (
                ecr,
                "type: aws:ecr/repository:Repository",
                "type: aws:ecr/repositori:Repository",
            ),
            vec![
                "Error: error resolving type of resource repository: unable to find resource type \"aws:ecr/repositori:Repository\" in resource provider \"aws\"",
            ],
        ),
        (
            (ecr, "${repository.repositoryUrl}", "${repository.repositoryUri}"),
            vec![
                "Error: repositoryUri does not exist on repository",
                "Existing properties are: repositoryUrl",
            ],
        ),
        (
            (
                ecr,
                "        scanOnPush: true",
                "        scanOnPush: true\n        scanOnPull: true",
            ),
            vec!["Error: Property scanOnPull does not exist on 'ecr.RepositoryImageScanningConfiguration'"],
        ),
        (
            (
                ecr,
                "      imageScanningConfiguration:\n        scanOnPush: true",
                "      imageScanningConfiguration:\n        - scanOnPush: true",
            ),
            vec![
                "imageScanningConfiguration: Cannot assign 'List<{scanOnPush: boolean}>' to 'ecr.RepositoryImageScanningConfiguration'",
            ],
        ),
        (
            (ecr, "      version: 7", "      dependOn: []\n      version: 7"),
            vec!["Error: dependOn does not exist on resource options"],
        ),
    ];
    for ((file, from, to), needles) in cases {
        let run = preview_with((file, from, to));
        let all = format!("{}{}", run.stdout, run.stderr);
        for needle in needles {
            assert!(
                all.contains(needle),
                "{to:?}: lacks {needle:?}\n--- stdout\n{}\n--- stderr\n{}",
                run.stdout,
                run.stderr
            );
        }
        assert!(
            run.stderr.contains("ecr"),
            "the failed project is named:\n{}",
            run.stderr
        );
    }
}

#[requires("sdk-schema")]
#[test]
fn runner_preview_of_a_program_missing_a_required_input_fails() {
    let Some(_) = tool("sdk-schema") else { return };
    let iam = "projects/identity/iam/Pulumi.yaml";
    let ws = Ws::configured("aws");
    ws.edit(
        iam,
        "      description: EKS control plane of stack ${pulumi.stack}\n      assumeRolePolicy:",
        "      description: EKS control plane of stack ${pulumi.stack}\n      trustPolicy:",
    );
    let run = ws.exec(&["preview", "-p", "aws", "-s", "dev", "--target", "iam"], &[]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    let all = format!("{}{}", run.stdout, run.stderr);
    // One diagnostic (pulumi-yaml's `assertTypeAssignable` of the resource's properties), every
    // reason under it: the missing input, and the unknown one (with the existing ones).
    for needle in [
        "Error: aws:iam/role:Role is not assignable from {description: string, trustPolicy: string}",
        "assumeRolePolicy: Missing required property 'assumeRolePolicy'",
        "Existing properties are: assumeRolePolicy,",
    ] {
        assert!(all.contains(needle), "lacks {needle:?}:\n{all}");
    }
}

/// What the CLI checks before an operation runs: the program's `config:` block itself when it
/// loads the project (`Project.Validate`, which the runner leaves to it: the stand-in refuses
/// through the runner, which names the project), and each stack value against the type its
/// program declares (`pkg/workspace/config.go`), which the runner checks first, before any
/// `pulumi` starts, with the CLI's type names.
#[test]
fn a_config_value_or_declaration_the_cli_refuses_fails_with_its_message() {
    let vpc = "projects/infra/vpc/Pulumi.yaml";
    let stack = "config/pulumi/Pulumi.dev.yaml";
    let azs = "  vpc:azs: [us-east-1a, us-east-1b]\n";
    let cases: [((&str, &str, &str), i32, &str); 4] = [
        (
            (
                vpc,
                "    type: string\n    default: 10.0.0.0/16",
                "    type: integer\n    default: 10.0.0.0/16",
            ),
            1,
            "Pulumi.yaml': The default value specified for configuration key 'cidr_block' is not of the expected type 'integer'",
        ),
        (
            (
                vpc,
                "    type: string\n    default: 10.0.0.0/16",
                "    type: string\n    descripton: CIDR\n    default: 10.0.0.0/16",
            ),
            1,
            "#/config/cidr_block: additionalProperties 'descripton' not allowed",
        ),
        (
            (
                stack,
                azs,
                "  vpc:azs: [us-east-1a, us-east-1b]\n  vpc:cidr_block: [10.0.0.0/16]\n",
            ),
            3,
            "`vpc:cidr_block` is a list, but projects/infra/vpc/Pulumi.yaml:10 declares it a text value: `pulumi up` would refuse the project (must be of type 'string')",
        ),
        (
            (stack, azs, "  vpc:azs: [us-east-1a, 2]\n"),
            3,
            "declares it a list, each item a text value: `pulumi up` would refuse the project (must be of type 'array<string>')",
        ),
    ];
    for ((file, from, to), code, needle) in cases {
        let ws = Ws::configured("aws");
        ws.edit(file, from, to);
        let run = ws.exec(&["preview", "-p", "aws", "-s", "dev", "--target", "vpc"], &[]);
        assert_eq!(
            run.code, code,
            "{to:?}\n--- stdout\n{}\n--- stderr\n{}",
            run.stdout, run.stderr
        );
        assert!(
            run.stderr.contains(needle),
            "{to:?}: lacks {needle:?}\n--- stderr\n{}",
            run.stderr
        );
        assert!(
            run.stderr.contains("vpc"),
            "the failed project is named:\n{}",
            run.stderr
        );
        if code == 3 {
            let previews: Vec<_> = ws
                .invocations()
                .into_iter()
                .filter(|i| i.command() == "preview")
                .collect();
            assert!(previews.is_empty(), "nothing was previewed: {previews:?}");
        }
    }
}
