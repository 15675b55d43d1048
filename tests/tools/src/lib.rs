//! The tools the tests use beyond cargo's, each named once here with the rule that finds it and
//! the script that installs it. A test asks for a tool by name twice over: `#[requires("dot")]`
//! (the `test-requires` crate) ignores it with the reason when the tool is missing as it is
//! built, and `support::tool("dot")` at run time skips it (saying so), or fails it under
//! `RUNNER_REQUIRE_TOOLS=1`, as in CI, where a skip would prove nothing.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};

/// The repository's root.
pub const REPO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

/// Whether every tool must be there (`RUNNER_REQUIRE_TOOLS=1`, as `.ci/run` sets): a test then
/// never skips, and never is ignored.
pub fn required() -> bool {
    std::env::var_os("RUNNER_REQUIRE_TOOLS").is_some_and(|v| v == "1")
}

/// Every name a test may ask for, in the order `--help`-like lists show them.
pub const NAMES: &[&str] = &[
    "dot",
    "xmllint",
    "rsync",
    "unshare",
    "script",
    "lua5.1",
    "kubectl",
    "chromium",
    "check-jsonschema",
    "hadolint",
    "actionlint",
    "gitlab-ci-local",
    "kubernetes-models",
    "moto",
    "schemas",
    "charts",
    "sdk-schema",
    "real-pulumi",
    "kube",
    "node",
    "engines",
];

/// Where `name` is (a command's name, a file or a directory), or why a test cannot have it, in
/// a sentence that ends with what installs it. Found once per process.
///
/// # Panics
/// When `name` is none of [`NAMES`] (a test's typo).
pub fn find(name: &str) -> Result<PathBuf, String> {
    static FOUND: OnceLock<Mutex<HashMap<String, Result<PathBuf, String>>>> = OnceLock::new();
    assert!(
        NAMES.contains(&name),
        "no test tool is named {name:?}; the names: {NAMES:?}"
    );
    let mut found = FOUND
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    found.entry(name.to_string()).or_insert_with(|| look(name)).clone()
}

const TEST_TOOLS: &str = "run scripts/install-test-tools";

fn look(name: &str) -> Result<PathBuf, String> {
    match name {
        "dot" => command(name, "Graphviz `dot`"),
        "xmllint" | "rsync" | "lua5.1" | "kubectl" => command(name, name),
        "unshare" => command(name, "unshare (util-linux)"),
        "script" => command(name, "`script` (util-linux)"),
        "chromium" => ["chromium", "chromium-browser", "google-chrome"]
            .into_iter()
            .find(|c| {
                Command::new(c)
                    .arg("--version")
                    .output()
                    .is_ok_and(|o| o.status.success())
            })
            .map(PathBuf::from)
            .ok_or_else(|| format!("chromium is not installed: {TEST_TOOLS}")),
        "check-jsonschema" => file(cache().join("venv/bin/check-jsonschema"), name, TEST_TOOLS),
        "hadolint" => file(cache().join("venv/bin/hadolint"), name, TEST_TOOLS),
        "actionlint" => file(cache().join("bin/actionlint"), name, TEST_TOOLS),
        "gitlab-ci-local" => file(cache().join("node/node_modules/.bin/gitlab-ci-local"), name, TEST_TOOLS),
        "kubernetes-models" => file(
            cache().join("node/node_modules/@kubernetes-models"),
            "the npm validators @kubernetes-models",
            TEST_TOOLS,
        ),
        "moto" => file(cache().join("moto/bin/moto_server"), "moto's S3 server", TEST_TOOLS),
        "schemas" => var("RUNNER_SCHEMAS_DIR").ok_or_else(|| {
            "RUNNER_SCHEMAS_DIR is not set: point it at the published schemas (junit.xsd, the CRDs of PKO, \
             Argo and External Secrets; .ci/run takes ../shared/schemas)"
                .to_string()
        }),
        "charts" => {
            let dir = var("RUNNER_CHARTS_DIR").unwrap_or_else(|| Path::new(REPO).join("../shared/charts"));
            if dir.join("repo/index.yaml").is_file() {
                Ok(dir)
            } else {
                Err(format!(
                    "the published charts are not in {} (no repo/index.yaml): set RUNNER_CHARTS_DIR (.ci/run takes \
                     ../shared/charts)",
                    dir.display()
                ))
            }
        }
        "sdk-schema" => sdk_schema(),
        "real-pulumi" => real_pulumi(),
        "kube" => kube(),
        "node" => node(),
        "engines" => engines(),
        _ => unreachable!("every name of NAMES has a rule"),
    }
}

fn var(k: &str) -> Option<PathBuf> {
    std::env::var_os(k).filter(|v| !v.is_empty()).map(PathBuf::from)
}

/// The cache of `scripts/install-test-tools`: `$RUNNER_TEST_TOOLS`, else
/// `~/.cache/runner-test-tools`.
pub fn cache() -> PathBuf {
    var("RUNNER_TEST_TOOLS")
        .or_else(|| var("HOME").map(|h| h.join(".cache/runner-test-tools")))
        .unwrap_or_default()
}

/// The provider SDKs' cache (the stand-in's rule): `$RUNNER_SDK_CACHE`, else
/// `$XDG_CACHE_HOME/runner-sdk`, else `~/.cache/runner-sdk`.
fn sdk_cache() -> PathBuf {
    var("RUNNER_SDK_CACHE")
        .or_else(|| var("XDG_CACHE_HOME").map(|d| d.join("runner-sdk")))
        .or_else(|| var("HOME").map(|h| h.join(".cache/runner-sdk")))
        .unwrap_or_else(|| PathBuf::from(".cache/runner-sdk"))
}

/// The provider SDKs' schema, built for the pins of `scripts/provider-versions` (the cache keeps
/// the copy it was built for; a reworded comment changes no SDK).
fn sdk_schema() -> Result<PathBuf, String> {
    let cache = sdk_cache();
    let schema = file(cache.join("schema.json"), "the provider SDK schema", TEST_TOOLS)?;
    let pins = |path: PathBuf| {
        std::fs::read_to_string(path).ok().map(|text| {
            text.lines()
                .map(|l| {
                    l.split('#')
                        .next()
                        .unwrap_or_default()
                        .split_whitespace()
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .filter(|l| !l.is_empty())
                .collect::<Vec<_>>()
        })
    };
    if pins(Path::new(REPO).join("scripts/provider-versions")) == pins(cache.join("provider-versions")) {
        Ok(schema)
    } else {
        Err(format!(
            "the provider SDK schema in {} was built for other pins than scripts/provider-versions: {TEST_TOOLS}",
            cache.display()
        ))
    }
}

/// A command on `PATH` (it starts).
fn command(name: &str, what: &str) -> Result<PathBuf, String> {
    if Command::new(name).arg("-V").output().is_ok() {
        Ok(PathBuf::from(name))
    } else {
        Err(format!("{what} is not installed: {TEST_TOOLS}"))
    }
}

/// A file or directory a script installs.
fn file(path: PathBuf, what: &str, fix: &str) -> Result<PathBuf, String> {
    if path.exists() {
        Ok(path)
    } else {
        Err(format!(
            "{what} is not installed (looked for {}): {fix}",
            path.display()
        ))
    }
}

/// The first of `wanted` that is not there, as the reason.
fn all_of(wanted: &[PathBuf], what: &str, fix: &str) -> Result<(), String> {
    match wanted.iter().find(|w| !w.exists()) {
        Some(missing) => Err(format!(
            "{what} are not installed ({} is missing): {fix}",
            missing.display()
        )),
        None => Ok(()),
    }
}

/// The real `pulumi` and its YAML language host as `scripts/install-pulumi` builds them:
/// `$RUNNER_REAL_PULUMI`, else `<cache>/real-pulumi`, then `pulumi-<v>-yaml-<v>` of
/// `scripts/real-pulumi/versions`, when `pulumi version` prints the pin.
fn real_pulumi() -> Result<PathBuf, String> {
    let versions = std::fs::read_to_string(Path::new(REPO).join("scripts/real-pulumi/versions"))
        .map_err(|e| format!("scripts/real-pulumi/versions cannot be read: {e}"))?;
    let pin = |name: &str| {
        versions
            .lines()
            .map(|l| l.split('#').next().unwrap_or_default())
            .find_map(|l| {
                let mut words = l.split_whitespace();
                (words.next() == Some(name)).then(|| words.next().unwrap_or_default().to_string())
            })
            .ok_or_else(|| format!("scripts/real-pulumi/versions names no {name}"))
    };
    let (cli, yaml) = (pin("pulumi")?, pin("pulumi-language-yaml")?);
    let cache = var("RUNNER_REAL_PULUMI").unwrap_or_else(|| cache().join("real-pulumi"));
    let dir = cache.join(format!("pulumi-{cli}-yaml-{yaml}"));
    let version = Command::new(dir.join("pulumi")).arg("version").output();
    match version {
        Ok(out) if String::from_utf8_lossy(&out.stdout).trim() == cli && dir.join("pulumi-language-yaml").is_file() => {
            Ok(dir)
        }
        _ => Err(format!(
            "the real pulumi {cli} (with pulumi-language-yaml {yaml}) is not built in {}: run scripts/install-pulumi",
            dir.display()
        )),
    }
}

/// The local cluster's tools (`scripts/install-kube-tools`): `$RUNNER_KUBE_TOOLS`, else
/// `<cache>/kube`.
fn kube() -> Result<PathBuf, String> {
    let dir = var("RUNNER_KUBE_TOOLS").unwrap_or_else(|| cache().join("kube"));
    let wanted = [
        "bin/etcd",
        "bin/kube-apiserver",
        "bin/kube-controller-manager",
        "bin/kube-scheduler",
        "bin/kwok",
        "bin/kubectl",
        "bin/pulumi-resource-kubernetes",
        "kwok-stages.yaml",
        "pulumi-plugins",
    ]
    .map(|w| dir.join(w));
    all_of(&wanted, "the local cluster's tools", "run scripts/install-kube-tools")?;
    Ok(dir)
}

/// A real node beside the local cluster: root, Debian's containerd, runc, CNI plugins and socat
/// (`scripts/install-node-tools`), its images, and the kubelet (`scripts/install-kube-tools`).
/// The local cluster's tools, found.
fn node() -> Result<PathBuf, String> {
    let uid = std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| {
            l.strip_prefix("Uid:")
                .map(|r| r.split_whitespace().next().unwrap_or("").to_string())
        });
    if uid.as_deref() != Some("0") {
        return Err("the real node needs root (namespaces, mounts, cgroups)".to_string());
    }
    let images = var("RUNNER_NODE_TOOLS").unwrap_or_else(|| cache().join("real-node"));
    let wanted = [
        PathBuf::from("/usr/bin/containerd"),
        PathBuf::from("/usr/bin/ctr"),
        PathBuf::from("/usr/bin/containerd-shim-runc-v2"),
        PathBuf::from("/usr/sbin/runc"),
        PathBuf::from("/usr/lib/cni/bridge"),
        PathBuf::from("/usr/lib/cni/host-local"),
        PathBuf::from("/usr/bin/socat"),
        images.join("pause.tar"),
        images.join("busybox.tar"),
    ];
    all_of(&wanted, "the real node's tools", "run scripts/install-node-tools")?;
    let kube = kube()?;
    all_of(
        &[kube.join("bin/kubelet")],
        "the kubelet",
        "run scripts/install-kube-tools",
    )?;
    Ok(kube)
}

/// Argo Workflows' controller, CLI and executor image (`scripts/install-engine-tools`):
/// `$RUNNER_ENGINE_TOOLS`, else `<cache>/engines`; and moto, which the pods' backend is.
fn engines() -> Result<PathBuf, String> {
    let engines = var("RUNNER_ENGINE_TOOLS").unwrap_or_else(|| cache().join("engines"));
    let wanted = [
        engines.join("bin/workflow-controller"),
        engines.join("bin/argo"),
        engines.join("argoexec.tar"),
        cache().join("moto/bin/python3"),
    ];
    all_of(
        &wanted,
        "the engines",
        "run scripts/install-engine-tools and scripts/install-test-tools",
    )?;
    Ok(engines)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_tool_says_what_installs_it() {
        let why = file(PathBuf::from("/nonexistent/bin/x"), "x", TEST_TOOLS).unwrap_err();
        assert_eq!(
            why,
            "x is not installed (looked for /nonexistent/bin/x): run scripts/install-test-tools"
        );
        assert!(
            command("no-such-command-anywhere", "a thing")
                .unwrap_err()
                .ends_with(TEST_TOOLS)
        );
    }

    #[test]
    #[should_panic(expected = "no test tool is named \"grahpviz\"")]
    fn a_name_no_rule_has_is_a_typo() {
        let _ = find("grahpviz");
    }
}
