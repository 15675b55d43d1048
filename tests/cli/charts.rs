//! `runner charts` and `runner charts mirror`: the charts the programs install, and a Helm
//! repository of exactly those, pulled from a repository this test serves on 127.0.0.1
//! (`serve::Server`): the package checked, its values schema made whole, the index written;
//! every bad input refused with the chart named and nothing written.

use std::io::Read as _;
use std::path::Path;

use sha2::Digest as _;

use crate::serve::{Reply, Server};
use crate::support::{Run, Ws, runner};

/// The demo chart's values schema: a property typed by a Kubernetes definition of a document
/// off the chart, as nginx-ingress's are.
fn schema(defs: &str) -> String {
    format!(
        r#"{{
  "$schema": "https://json-schema.org/draft/2019-09/schema",
  "type": "object",
  "properties": {{
    "replicaCount": {{"type": "integer"}},
    "tolerations": {{"type": "array", "items": {{"$ref": "{defs}#/definitions/io.k8s.api.core.v1.Toleration"}}}}
  }}
}}"#
    )
}

const DEFINITIONS: &str = r##"{"definitions": {
  "io.k8s.api.core.v1.Toleration": {"type": "object", "properties": {"key": {"type": "string"}, "seconds": {"$ref": "#/definitions/io.k8s.api.core.v1.Seconds"}}},
  "io.k8s.api.core.v1.Seconds": {"type": "integer"},
  "io.k8s.api.core.v1.Unused": {"type": "object"}
}}"##;

fn tgz(files: &[(&str, &[u8])]) -> Vec<u8> {
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let mut tar = tar::Builder::new(gz);
    for (path, bytes) in files {
        let mut h = tar::Header::new_ustar();
        h.set_size(bytes.len() as u64);
        h.set_mode(0o644);
        h.set_mtime(1_700_000_000);
        tar.append_data(&mut h, path, *bytes).unwrap();
    }
    tar.into_inner().unwrap().finish().unwrap()
}

fn files_of(package: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(package));
    archive
        .entries()
        .unwrap()
        .map(|e| {
            let mut e = e.unwrap();
            let mut bytes = Vec::new();
            e.read_to_end(&mut bytes).unwrap();
            (e.path().unwrap().to_string_lossy().into_owned(), bytes)
        })
        .collect()
}

fn sha(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    sha2::Sha256::digest(bytes).iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// A repository serving `demo` 1.2.0 and 1.1.0, and the document its schema refers to.
struct Upstream {
    server: Server,
    package: Vec<u8>,
}

impl Upstream {
    fn start() -> Self {
        let server = Server::start();
        let defs = format!("{}/defs/_definitions.json", server.url);
        let package = tgz(&[
            (
                "demo/Chart.yaml",
                b"apiVersion: v2\nname: demo\nversion: 1.2.0\nappVersion: \"4.0\"\n",
            ),
            ("demo/values.yaml", b"replicaCount: 1\ntolerations: []\n"),
            ("demo/values.schema.json", schema(&defs).as_bytes()),
            ("demo/templates/NOTES.txt", b"hello\n"),
        ]);
        server
            .put("/repo/index.yaml", Reply::ok(index(&sha(&package))))
            .put("/repo/demo-1.2.0.tgz", Reply::ok(package.clone()))
            .put("/defs/_definitions.json", Reply::ok(DEFINITIONS));
        Upstream { server, package }
    }

    fn repo(&self) -> String {
        format!("{}/repo", self.server.url)
    }
}

fn index(digest: &str) -> String {
    format!(
        "apiVersion: v1\nentries:\n  demo:\n  - apiVersion: v2\n    appVersion: \"4.0\"\n    created: \"2024-11-27T16:15:00Z\"\n    \
         description: A demo\n    digest: {digest}\n    name: demo\n    urls:\n    - demo-1.2.0.tgz\n    version: 1.2.0\n  \
         - apiVersion: v2\n    name: demo\n    urls:\n    - demo-1.1.0.tgz\n    version: 1.1.0\ngenerated: \"2024-11-27T16:15:00Z\"\n"
    )
}

/// A workspace of one project installing `demo` from `repo` (its own repository).
fn workspace(repo: &str) -> Ws {
    let ws = Ws::empty();
    ws.write(
        "providers/demo.toml",
        "name = \"demo\"\ndescription = \"One chart\"\n\n[[project]]\nname = \"app\"\npath = \"projects/app\"\nlayer = \"apps\"\n",
    )
    .write(
        "projects/app/Pulumi.yaml",
        &format!(
            "name: app\nruntime: yaml\nconfig:\n  kubernetes:chart_mirror: {repo}\n  chart_version:\n    type: string\n    default: 1.2.0\n\
             resources:\n  release:\n    type: kubernetes:helm.sh/v3:Release\n    properties:\n      chart: demo\n      \
             version: ${{chart_version}}\n      repositoryOpts:\n        repo: ${{kubernetes:chart_mirror}}\n"
        ),
    );
    ws
}

/// What `charts mirror` said, as a person reads it: the upstream's address (its port varies)
/// filtered, and the workspace's path.
#[track_caller]
fn said(ws: &Ws, up: &Upstream, name: &str, stderr: &str) {
    let text = stderr.replace(up.server.url.trim_start_matches("http://"), "[upstream]");
    let mut settings = crate::support::redactions(ws.path());
    // (A package's digest: it holds the upstream's address.)
    settings.add_filter(r"\b[0-9a-f]{64}\b", "[sha256]");
    settings.bind(|| insta::assert_snapshot!(name, text));
}

fn mirror(ws: &Ws, dir: &Path, extra: &[&str]) -> Run {
    let mut args = vec!["charts", "mirror", dir.to_str().unwrap(), "-p", "demo"];
    args.extend_from_slice(extra);
    crate::support::run(&mut runner(ws.path(), &args))
}

#[test]
fn charts_lists_what_the_programs_install_with_the_stack_files_versions() {
    let ws = Ws::reference();
    let list = crate::support::run(&mut runner(ws.path(), &["charts", "-p", "kubeconfig"])).expect(0);
    insta::assert_snapshot!(list.stdout);
    // The stack file's values win, and where they install from is said.
    ws.write(
        "config/pulumi/Pulumi.dev.yaml",
        "config:\n  prometheus:statsd_chart_version: 0.14.0\n  kubernetes:chart_mirror: https://robot:pw@charts.example/helm\n",
    );
    let json = crate::support::run(&mut runner(
        ws.path(),
        &["charts", "-p", "kubeconfig", "-s", "dev", "-f", "json"],
    ))
    .expect(0)
    .json();
    let statsd = json
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["chart"] == "prometheus-statsd-exporter")
        .unwrap();
    assert_eq!(statsd["version"], "0.14.0");
    assert_eq!(
        statsd["repository"],
        "https://prometheus-community.github.io/helm-charts"
    );
    assert_eq!(statsd["file"], "projects/services/prometheus/Pulumi.yaml");
    let text = crate::support::run(&mut runner(ws.path(), &["charts", "-p", "kubeconfig", "-s", "dev"])).expect(0);
    // `installed from https://robot:***@charts.example/helm (kubernetes:chart_mirror in …)`.
    crate::snapshot!(
        ws.path(),
        "charts_from_a_mirror",
        crate::support::lines_with(&text.stderr, "installed from ")
    );
    assert!(
        !format!("{}{}", text.stdout, text.stderr).contains("pw@"),
        "{}",
        text.stderr
    );
}

#[test]
fn the_mirror_holds_the_chart_with_its_schema_whole_and_an_index_helm_reads() {
    let up = Upstream::start();
    let ws = workspace(&up.repo());
    let dir = ws.path().join("mirror");
    // An earlier mirror's chart stays in the index.
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("index.yaml"),
        "apiVersion: v1\nentries:\n  other:\n  - name: other\n    version: 0.1.0\n    urls: [other-0.1.0.tgz]\n",
    )
    .unwrap();
    let run = mirror(&ws, &dir, &[]).expect(0);
    // What it pulled, the definitions its schema takes in, and what it wrote (serve it over
    // HTTP).
    said(&ws, &up, "mirror_pulled_and_wrote", &run.stderr);
    let package = std::fs::read(dir.join("demo-1.2.0.tgz")).unwrap();
    let index: serde_json::Value =
        serde_saphyr::from_str(&std::fs::read_to_string(dir.join("index.yaml")).unwrap()).unwrap();
    let entry = &index["entries"]["demo"][0];
    assert_eq!(entry["urls"][0], "demo-1.2.0.tgz");
    assert_eq!(entry["digest"], sha(&package), "the digest of the package written");
    assert_eq!(entry["appVersion"], "4.0", "the upstream entry's fields kept");
    assert_eq!(index["entries"]["other"][0]["version"], "0.1.0", "merged");
    // The schema refers to nothing off the chart, and holds what it needs; every other file as
    // it was.
    let files = files_of(&package);
    let upstream = files_of(&up.package);
    assert_eq!(files.len(), upstream.len());
    for ((path, bytes), (path0, bytes0)) in files.iter().zip(&upstream) {
        assert_eq!(path, path0);
        if path != "demo/values.schema.json" {
            assert_eq!(bytes, bytes0, "{path}");
        }
    }
    let schema: serde_json::Value =
        serde_json::from_slice(&files.iter().find(|(p, _)| p == "demo/values.schema.json").unwrap().1).unwrap();
    let text = schema.to_string();
    assert!(!text.contains("http://127.0.0.1"), "{text}");
    assert_eq!(
        schema["properties"]["tolerations"]["items"]["$ref"],
        "#/$defs/io.k8s.api.core.v1.Toleration"
    );
    assert_eq!(schema["$defs"]["io.k8s.api.core.v1.Seconds"]["type"], "integer");
    assert!(schema["$defs"].get("io.k8s.api.core.v1.Unused").is_none());
    // Again, for a stack that installs from a mirror already: the same files, and the advice
    // is to serve them where it installs from.
    ws.write(
        "config/pulumi/Pulumi.dev.yaml",
        &format!("config:\n  kubernetes:chart_mirror: {}/mirror\n", up.server.url),
    );
    let again = mirror(&ws, &dir, &["-s", "dev", "--from", &up.repo()]).expect(0);
    said(&ws, &up, "mirror_for_a_stack_that_installs_from_it", &again.stderr);
    assert_eq!(std::fs::read(dir.join("demo-1.2.0.tgz")).unwrap(), package);
}

#[test]
fn a_proxys_credentials_are_sent_and_never_written_or_shown() {
    let up = Upstream::start();
    let ws = workspace("https://charts.example.invalid/demo");
    let dir = ws.path().join("mirror");
    let from = up.repo().replace("http://", "http://robot:S3cr%40t-pw@");
    let run = mirror(&ws, &dir, &["--from", &from]).expect(0);
    let auth: Vec<String> = up
        .server
        .requests()
        .iter()
        .filter(|r| r.path.starts_with("/repo/"))
        .map(|r| r.headers.get("authorization").cloned().unwrap_or_default())
        .collect();
    // robot:S3cr@t-pw
    assert!(auth.iter().all(|a| a == "Basic cm9ib3Q6UzNjckB0LXB3"), "{auth:?}");
    let written = std::fs::read_to_string(dir.join("index.yaml")).unwrap();
    for text in [&run.stdout, &run.stderr, &written] {
        assert!(!text.contains("S3cr"), "{text}");
    }
    said(&ws, &up, "mirror_through_a_proxy", &run.stderr);
}

/// Each bad answer of the upstream: the chart named, the fix given, DIR left as it was.
#[test]
fn bad_upstream_answers_are_each_said_and_leave_the_mirror_as_it_was() {
    type Breaks<'a> = &'a dyn Fn(&Upstream);
    // Each: what is wrong (the chart, the repository), that nothing was written, the help.
    let cases: [(&str, Breaks, &str); 5] = [
        (
            "a version the repository lacks",
            &|_| {},
            "mirror_of_a_version_the_repository_lacks",
        ),
        (
            "an index that is not there",
            &|u| {
                u.server.put(
                    "/repo/index.yaml",
                    Reply {
                        status: 404,
                        body: b"gone".to_vec(),
                        length: None,
                    },
                );
            },
            "mirror_without_an_index",
        ),
        (
            "an HTML page for an index",
            &|u| {
                u.server.put(
                    "/repo/index.yaml",
                    Reply::ok("<!DOCTYPE html><html><body>Sign in</body></html>"),
                );
            },
            "mirror_of_an_html_page_for_an_index",
        ),
        (
            "a package cut short",
            &|u| {
                let mut cut = Reply::ok(u.package[..u.package.len() / 2].to_vec());
                cut.length = Some(u.package.len());
                u.server.put("/repo/demo-1.2.0.tgz", cut);
            },
            "mirror_of_a_package_cut_short",
        ),
        (
            "a package whose digest is not the index's",
            &|u| {
                let mut other = u.package.clone();
                other.push(0);
                u.server.put("/repo/demo-1.2.0.tgz", Reply::ok(other));
            },
            "mirror_of_a_package_of_another_digest",
        ),
    ];
    for (what, break_it, name) in cases {
        let up = Upstream::start();
        break_it(&up);
        let ws = workspace(&up.repo());
        if what.contains("lacks") {
            ws.write("config/pulumi/Pulumi.dev.yaml", "config:\n  app:chart_version: 1.3.0\n");
        }
        let dir = ws.path().join("mirror");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("index.yaml"), "apiVersion: v1\nentries: {}\n").unwrap();
        let run = mirror(&ws, &dir, &["-s", "dev"]).expect(1);
        said(&ws, &up, name, &run.stderr);
        let left: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, ["index.yaml"], "{what}");
        assert_eq!(
            std::fs::read_to_string(dir.join("index.yaml")).unwrap(),
            "apiVersion: v1\nentries: {}\n"
        );
    }
    // The versions there are, in the fix.
    let up = Upstream::start();
    let ws = workspace(&up.repo());
    ws.write("config/pulumi/Pulumi.dev.yaml", "config:\n  app:chart_version: 1.3.0\n");
    mirror(&ws, &ws.path().join("m"), &["-s", "dev"])
        .expect(1)
        .stderr_has("pin a version it has (1.2.0, 1.1.0) at projects/app/Pulumi.yaml:");
    assert!(!ws.path().join("m").exists());
}

#[test]
fn a_mirror_folder_that_is_a_file_or_a_link_is_refused_before_anything_is_read() {
    let up = Upstream::start();
    let ws = workspace(&up.repo());
    ws.write("a-file", "mine\n");
    mirror(&ws, &ws.path().join("a-file"), &[])
        .expect(2)
        .stderr_has("a-file is not a directory");
    let target = ws.path().join("elsewhere");
    std::fs::create_dir_all(&target).unwrap();
    std::os::unix::fs::symlink(&target, ws.path().join("link")).unwrap();
    mirror(&ws, &ws.path().join("link"), &[])
        .expect(2)
        .stderr_has("link is a symbolic link: the mirror never writes through a link");
    assert_eq!(std::fs::read_dir(&target).unwrap().count(), 0);
    assert!(up.server.requests().is_empty(), "{:?}", up.server.requests());
    mirror(&ws, &ws.path().join("m"), &["--from", "ftp://robot:pw@h/x"])
        .expect(2)
        .stderr_has("--from ftp://robot:***@h/x is not an http:// or https:// URL");
}

/// `validate` looks the charts up in the stack's mirror before anything runs: a version the
/// mirror lacks is a problem naming the program's line and the command that fills it; a mirror
/// that cannot be read, a warning.
#[test]
fn validate_finds_a_chart_the_mirror_lacks() {
    let up = Upstream::start();
    let ws = workspace("https://charts.example.invalid/demo");
    ws.write(
        "config/pulumi/Pulumi.dev.yaml",
        &format!(
            "config:\n  kubernetes:chart_mirror: {}\n  app:chart_version: 1.1.0\n",
            up.repo()
        ),
    );
    let validate = |ws: &Ws| ws.exec(&["validate", "-p", "demo", "-s", "dev"], &[]);
    validate(&ws).expect(0).stderr_has("All configuration is OK");
    ws.write(
        "config/pulumi/Pulumi.dev.yaml",
        &format!(
            "config:\n  kubernetes:chart_mirror: {}\n  app:chart_version: 1.3.0\n",
            up.repo()
        ),
    );
    validate(&ws)
        .expect(3)
        .stderr_has(&format!(
            "projects/app/Pulumi.yaml:9: `app` installs the chart demo 1.3.0 from the mirror {} (kubernetes:chart_mirror), \
             which has no such version (it has 1.2.0, 1.1.0)",
            up.repo()
        ))
        .stderr_has("runner charts mirror DIR -p demo -s dev");
    ws.write(
        "config/pulumi/Pulumi.dev.yaml",
        "config:\n  kubernetes:chart_mirror: http://127.0.0.1:9/mirror\n",
    );
    validate(&ws)
        .expect(0)
        .stderr_has("the charts were not checked against the mirror http://127.0.0.1:9/mirror (kubernetes:chart_mirror): cannot read http://127.0.0.1:9/mirror/index.yaml");
}
