//! The loader as a whole: every file that loads, and every problem each kind of broken file
//! gets, at its file, line and column.

use super::*;
use crate::workspace::PROVIDERS_DIR;

/// Provider files by name and their text.
type Files<'a> = &'a [(&'a str, &'a str)];
/// Projects in order, each with what it needs.
type Graph<'a> = &'a [(&'a str, &'a [&'a str])];
/// What the case is about, its provider files by name, and the problems expected.
type Broken = (&'static str, Vec<(&'static str, String)>, Vec<&'static str>);

/// A layer of two projects the cases include, rewire and exclude.
const LAYER: &str = r#"kind = "layer"
description = "Shared"

[[project]]
name = "logstore"
path = "projects/logstore"
layer = "services"
needs = ["cluster"]

[[project]]
name = "logagent"
path = "projects/logagent"
layer = "services"
needs = ["logstore"]
"#;

/// A provider of one cluster project, `extra` appended (more projects, tables, or keys that
/// must come before the first table go in `head`).
fn provider(head: &str, extra: &str) -> String {
    format!(
        "description = \"Test\"\n{head}\n[[project]]\nname = \"cluster\"\npath = \"projects/cluster\"\nlayer = \"cluster\"\n{extra}"
    )
}

/// Loads `p` from a workspace holding `files` and a `Pulumi.yaml` in every project directory.
fn load_in(files: &[(&str, &str)]) -> Result<Provider, LoadError> {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        let path = dir.path().join(PROVIDERS_DIR).join(format!("{name}.toml"));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    for p in ["cluster", "logstore", "logagent", "extra"] {
        let d = dir.path().join("projects").join(p);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("Pulumi.yaml"), format!("name: {p}\nruntime: yaml\n")).unwrap();
    }
    std::fs::create_dir_all(dir.path().join("scripts")).unwrap();
    std::fs::write(dir.path().join("scripts/notify.sh"), "#!/bin/sh\n").unwrap();
    // Paths shown relative to the workspace, as when the runner runs at its root.
    let ws = Workspace::locate(Some(dir.path()), dir.path()).unwrap();
    load(&ws, "p")
}

/// `file:line:column: message` of every problem.
fn problems(r: Result<Provider, LoadError>) -> Vec<String> {
    match r {
        Ok(p) => panic!("{} loaded", p.name),
        Err(LoadError::NotAProvider { name, is_layer }) => vec![format!("not a provider: {name} {is_layer}")],
        Err(LoadError::Invalid(ds)) => ds.iter().map(|d| format!("{}: {}", d.location, d.message)).collect(),
    }
}

#[test]
fn valid_files_load_merged_and_rewired() {
    let cases: &[(&str, Files<'_>, Graph<'_>)] = &[
        ("own projects only", &[("p", &provider("", ""))], &[("cluster", &[])]),
        (
            "a layer's projects follow the provider's",
            &[("p", &provider("include = [\"shared\"]", "")), ("shared", LAYER)],
            &[
                ("cluster", &[]),
                ("logstore", &["cluster"]),
                ("logagent", &["logstore"]),
            ],
        ),
        (
            "a rewire replaces needs",
            &[
                (
                    "p",
                    &provider(
                        "include = [\"shared\"]",
                        "\n[rewire]\nlogagent = { needs = [\"cluster\"], add_after = [\"logstore\"] }\n",
                    ),
                ),
                ("shared", LAYER),
            ],
            &[
                ("cluster", &[]),
                ("logstore", &["cluster"]),
                ("logagent", &["cluster", "logstore"]),
            ],
        ),
        (
            "an excluded project is gone",
            &[
                ("p", &provider("include = [\"shared\"]\nexclude = [\"logagent\"]", "")),
                ("shared", LAYER),
            ],
            &[("cluster", &[]), ("logstore", &["cluster"])],
        ),
    ];
    for (what, files, want) in cases {
        let p = load_in(files).unwrap_or_else(|e| panic!("{what}: {:?}", problems(Err(e))));
        let got: Vec<(String, Vec<String>)> = p
            .projects
            .iter()
            .enumerate()
            .map(|(i, pr)| {
                let needs = p
                    .graph
                    .needs(i)
                    .iter()
                    .map(|n| p.graph.name(n.node).to_string())
                    .collect();
                (pr.name.clone(), needs)
            })
            .collect();
        let want: Vec<(String, Vec<String>)> = want
            .iter()
            .map(|(n, needs)| (n.to_string(), needs.iter().map(ToString::to_string).collect()))
            .collect();
        assert_eq!(got, want, "{what}");
    }
}

/// Each problem's `file:line:column: message` starts with the expected text, in order.
#[test]
fn problems_point_at_file_line_and_column() {
    for (what, files, want) in broken() {
        let got = problems(load_in(
            &files.iter().map(|(n, t)| (*n, t.as_str())).collect::<Vec<_>>(),
        ));
        assert_eq!(got.len(), want.len(), "{what}: {got:#?}");
        for (g, w) in got.iter().zip(want) {
            assert!(g.starts_with(w), "{what}:\n got  {g}\n want {w}…");
        }
    }
}

/// The broken files of `problems_point_at_file_line_and_column`.
fn broken() -> Vec<Broken> {
    let one = |text: String| vec![("p", text)];
    let two_projects = "\n[[project]]\nname = \"a\"\npath = \"projects/none\"\nlayer = \"apps\"\n\n\
                        [[project]]\nname = \"b\"\npath = \"../b\"\nlayer = \"apps\"\n";
    let two_stores = "secrets_store = true\n\n[[project]]\nname = \"extra\"\npath = \"projects/extra\"\n\
                      layer = \"services\"\nsecrets_store = true\n";
    let prompts = "\n[[prompt]]\nkey = \"region\"\nquestion = \"?\"\n\n[[prompt]]\nkey = \"eks:min\"\n\
                   question = \"?\"\ntype = \"int\"\ndefault = \"three\"\n\n[[prompt]]\nkey = \"eks:node:size\"\n\
                   question = \"?\"\n";
    vec![
        (
            "a syntax error",
            one("description = \"x\"\n[[project]\n".into()),
            vec!["providers/p.toml:2:11: unclosed array table"],
        ),
        (
            "an unknown key",
            one(provider("colour = \"red\"", "")),
            vec!["providers/p.toml:2:1: unknown field `colour`"],
        ),
        (
            "a name that is not the file's",
            one(provider("name = \"q\"", "")),
            vec!["providers/p.toml:2:8: the name `q` differs from the file name `p`"],
        ),
        (
            "a description of two lines, and one that would retitle a terminal",
            one(provider("", "")
                .replacen("description = \"", "description = \"first\\n::error::second ", 1)
                .replace(
                    "layer = \"cluster\"",
                    "layer = \"cluster\"\ndescription = \"x\\u001b]0;t\\u0007\"",
                )),
            vec![
                "providers/p.toml:1:15: a description must be one line of text, without control characters",
                "providers/p.toml:7:15: a description must be one line of text, without control characters",
            ],
        ),
        (
            "an unknown layer",
            one(provider("", "").replace("layer = \"cluster\"", "layer = \"clustr\"")),
            vec!["providers/p.toml:6:9: unknown layer `clustr`"],
        ),
        (
            "a missing included layer",
            one(provider("include = [\"shraed\"]", "")),
            vec!["providers/p.toml:2:12: included layer `shraed` does not exist"],
        ),
        (
            "a provider included as a layer",
            vec![("p", provider("include = [\"q\"]", "")), ("q", provider("", ""))],
            vec!["providers/p.toml:2:12: `q` is a provider, not a layer"],
        ),
        (
            "a rewire of an unknown project",
            one(provider("", "\n[rewire]\nlogagnt = { needs = [\"cluster\"] }\n")),
            vec!["providers/p.toml:9:11: cannot rewire `logagnt`: no such project"],
        ),
        (
            "an unknown hook",
            one(provider("", "on_success = [\"kubeconfig-merg\"]\n")),
            vec!["providers/p.toml:7:15: unknown hook `kubeconfig-merg`"],
        ),
        (
            "a hook script outside scripts/",
            one(provider("", "on_success = [\"tools/notify.sh\"]\n")),
            vec!["providers/p.toml:7:15: hook script `tools/notify.sh` does not exist under scripts/"],
        ),
        (
            "a path without Pulumi.yaml and a path leaving the workspace",
            one(provider("", two_projects)),
            vec![
                "providers/p.toml:10:8: project `a` has no Pulumi.yaml at `projects/none`",
                "providers/p.toml:15:8: project path `../b` leaves the workspace",
            ],
        ),
        (
            "two secrets stores",
            one(provider("", two_stores)),
            vec!["providers/p.toml:13:17: `extra` and `cluster` are both the secrets store"],
        ),
        (
            "a prompt without a namespace, one with two, and a default of the wrong type",
            one(provider("", prompts)),
            vec![
                "providers/p.toml:9:7: prompt key `region` is not of the form namespace:key",
                "providers/p.toml:16:11: the default of `eks:min` does not fit its type `int`",
                "providers/p.toml:19:7: prompt key `eks:node:size` is not of the form namespace:key",
            ],
        ),
        (
            "a layer asked for as a provider",
            one(LAYER.into()),
            vec!["not a provider: p true"],
        ),
    ]
}
