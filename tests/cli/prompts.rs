//! First runs with no stack configuration: the provider's questions at a pseudo-terminal, the
//! file written from the answers, secrets asked hidden and stored only encrypted; and the same
//! without a terminal (CI), where what is missing is one error and the environment fills in.

use std::path::Path;
use std::time::Duration;

use expectrl::session::OsSession as Session;
use expectrl::{Eof, Expect as _};
use serde_json::Value;

use crate::support::{SECRETS, Ws, reads_its_terminal, wait_until};

/// The runner at a pseudo-terminal, with the usual test environment minus the variables that
/// would answer the questions. Runs pass `--yes`: at a terminal `up` now asks before running
/// (tested in `run.rs`), and these tests are about the configuration questions.
fn session(ws: &Ws, args: &[&str], remove: &[&str]) -> Session {
    let mut c = ws.command(args, &[("TERM", "dumb")]);
    for (k, _) in SECRETS {
        c.env_remove(k);
    }
    for k in remove {
        c.env_remove(k);
    }
    let mut s = expectrl::Session::spawn(c).expect("a pseudo-terminal");
    s.set_expect_timeout(Some(Duration::from_secs(60)));
    s
}

/// Waits for `question`, then types `answer` and Enter.
fn answer(s: &mut Session, question: &str, answer: &str) {
    s.expect(question)
        .unwrap_or_else(|e| panic!("never asked {question:?}: {e}"));
    reading(s);
    s.send_line(answer).unwrap();
}

/// Waits until the runner reads its terminal. A person types once the question is asked; what
/// is typed before would be lost: a hidden question turns echo off with `TCSAFLUSH`, which
/// drops it.
fn reading(s: &Session) {
    let pid = u32::try_from(s.get_process().pid().as_raw()).unwrap();
    wait_until(Duration::from_secs(60), "the runner never read its terminal", || {
        reads_its_terminal(pid)
    });
}

/// Everything printed from the last answer to the end, as text.
fn rest(s: &mut Session) -> String {
    let found = s.expect(Eof).unwrap();
    String::from_utf8_lossy(found.as_bytes()).into_owned()
}

/// The closing table of a run at the terminal (from `Summary:` on), as a person read it.
#[track_caller]
fn closing(ws: &Ws, screen: &str, name: &str) {
    let (table, settings) = crate::support::closing_table(&screen.replace("\r\n", "\n"), ws.path());
    settings.bind(|| insta::assert_snapshot!(name, table));
}

fn stack_yaml(ws: &Ws) -> Value {
    let text = std::fs::read_to_string(ws.path().join("config/pulumi/Pulumi.dev.yaml")).unwrap();
    serde_saphyr::from_str::<Value>(&text).unwrap()["config"].clone()
}

/// No file of the workspace (but the test harness's own logs) holds `plain`.
fn nowhere_in_plain_text(ws: &Ws, plain: &str) {
    let mut stack = vec![ws.path().to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().is_some_and(|n| n != "invocations.jsonl") {
                let bytes = std::fs::read(&p).unwrap();
                assert!(
                    !String::from_utf8_lossy(&bytes).contains(plain),
                    "{} holds a secret in plain text",
                    p.display()
                );
            }
        }
    }
}

fn secure(ws: &Ws, file: &Path, key: &str) -> bool {
    let text = std::fs::read_to_string(ws.path().join(file)).unwrap();
    let doc: Value = serde_saphyr::from_str(&text).unwrap();
    doc["config"][key]["secure"]
        .as_str()
        .is_some_and(|c| c.starts_with("v1:"))
}

#[test]
fn aws_first_run_asks_with_defaults_re_asks_integers_and_hides_secrets() {
    let ws = Ws::reference();
    let mut s = session(
        &ws,
        &["validate", "-p", "aws", "-s", "dev"],
        &["AWS_DEFAULT_REGION", "AWS_REGION", "AWS_PROFILE"],
    );
    // One line first: how many questions, and where the answers go.
    s.expect(
        "stack dev has no configuration yet: 8 questions, answers go to config/pulumi/Pulumi.dev.yaml; \
         5 secrets, stored encrypted in projects/services/secrets",
    )
    .unwrap();
    answer(&mut s, "AWS region to use [us-east-1]: ", "eu-west-1");
    answer(&mut s, "AWS profile to use (\"none\" for no profile) [none]: ", "");
    // The zones' default follows the region just chosen.
    answer(
        &mut s,
        "separate with commas) [eu-west-1a, eu-west-1b, eu-west-1c]: ",
        "eu-west-1a, eu-west-1b",
    );
    answer(&mut s, "EKS Kubernetes version [1.31]: ", "");
    answer(&mut s, "EKS instance type [t3.large]: ", "");
    answer(
        &mut s,
        "Minimum number of compute instances for the EKS cluster [3]: ",
        "three",
    );
    answer(&mut s, "`three` is not a whole number", "2");
    answer(
        &mut s,
        "Maximum number of compute instances for the EKS cluster [12]: ",
        "",
    );
    // The desired size defaults to the minimum chosen, not the example's.
    answer(
        &mut s,
        "Desired number of compute instances for the EKS cluster [2]: ",
        "",
    );
    answer(&mut s, "Prometheus administrator password: ", "prom-Adm1n-pw");
    answer(&mut s, "Prometheus administrator password (again): ", "prom-Adm1n-pw");
    answer(&mut s, "Bank of Sirius Accounts Database password: ", "acc0unts-Pw-x");
    answer(
        &mut s,
        "Bank of Sirius Accounts Database password (again): ",
        "acc0unts-Pw-y",
    );
    // A mismatch asks again.
    answer(&mut s, "The two entries differ", "acc0unts-Pw-x");
    answer(
        &mut s,
        "Bank of Sirius Accounts Database password (again): ",
        "acc0unts-Pw-x",
    );
    answer(&mut s, "Bank of Sirius Ledger Database password: ", "l3dger-Pw-z");
    answer(
        &mut s,
        "Bank of Sirius Ledger Database password (again): ",
        "l3dger-Pw-z",
    );
    // A user name is asked visibly, once.
    answer(&mut s, "Bank of Sirius demo site login username [testuser]: ", "");
    answer(
        &mut s,
        "Bank of Sirius demo site login password [password]: ",
        "dem0-Login-pw",
    );
    answer(
        &mut s,
        "Bank of Sirius demo site login password (again): ",
        "dem0-Login-pw",
    );
    let screen = rest(&mut s);
    the_answers_are_written(&ws, &screen);
}

/// What `aws_first_run_asks_with_defaults_re_asks_integers_and_hides_secrets` answered, written
/// where it belongs, and said so.
fn the_answers_are_written(ws: &Ws, screen: &str) {
    // A line after each file written; seven secrets stored where five were asked (the two the
    // runner made counted as such), the key pair it made said once it is stored; then all is OK.
    let said = crate::support::from_line(&screen.replace("\r\n", "\n"), "wrote ");
    crate::snapshot!(ws.path(), "aws_first_run_says_what_it_wrote", said);

    let config = stack_yaml(ws);
    assert_eq!(config["kubernetes:infra_type"], "AWS");
    assert_eq!(config["aws:region"], "eu-west-1");
    assert!(
        config.get("aws:profile").is_none(),
        "\"none\" writes no profile: {config}"
    );
    assert_eq!(config["vpc:azs"], serde_json::json!(["eu-west-1a", "eu-west-1b"]));
    assert_eq!(config["eks:k8s_version"], "1.31");
    assert_eq!(config["eks:min_size"], 2);
    assert_eq!(config["eks:max_size"], 12);
    assert_eq!(config["eks:desired_capacity"], 2);

    let store = Path::new("projects/services/secrets/Pulumi.dev.yaml");
    for key in [
        "prometheus:adminpass",
        "sirius:accounts_pwd",
        "sirius:ledger_pwd",
        "sirius:demo_login_user",
        "sirius:demo_login_pwd",
    ] {
        assert!(secure(ws, store, key), "{key} is not stored encrypted");
    }
    for plain in ["prom-Adm1n-pw", "acc0unts-Pw-x", "l3dger-Pw-z", "dem0-Login-pw"] {
        nowhere_in_plain_text(ws, plain);
    }
    // The second run asks nothing: everything is stored.
    let again = ws.exec(&["validate", "-p", "aws", "-s", "dev", "--non-interactive"], &[]);
    again.expect(0);
}

#[test]
fn digitalocean_asks_for_its_token_hidden_and_stores_it_encrypted_in_the_shared_file() {
    let ws = Ws::reference();
    let mut s = session(
        &ws,
        &["up", "-p", "do", "-s", "dev", "--target", "container-registry", "--yes"],
        &["DIGITALOCEAN_TOKEN"],
    );
    answer(&mut s, "DigitalOcean API token: ", "dop_v1_T0ken-secret");
    answer(&mut s, "DigitalOcean API token (again): ", "dop_v1_T0ken-secret");
    // No default: an empty answer is refused with the reason, and asked again.
    answer(&mut s, "Fully qualified domain name (FQDN) for the application: ", "");
    answer(&mut s, "an answer is required", "mara.example.com");
    answer(&mut s, "Kubernetes version [1.31.1-do.5]: ", "");
    answer(&mut s, "Region [sfo3]: ", "nyc3");
    answer(&mut s, "Instance size [s-4vcpu-8gb]: ", "");
    answer(&mut s, "Node count for the Kubernetes cluster [3]: ", "4");
    let screen = rest(&mut s);
    closing(&ws, &screen, "closing_table_of_a_first_do_run");
    assert!(
        !screen.contains("dop_v1_T0ken-secret"),
        "the token was echoed:\n{screen}"
    );

    let config = stack_yaml(&ws);
    assert_eq!(config["kubernetes:infra_type"], "DO");
    assert_eq!(config["kic-helm:fqdn"], "mara.example.com");
    assert_eq!(config["docean:region"], "nyc3");
    assert_eq!(config["docean:node_count"], 4);
    assert!(secure(
        &ws,
        Path::new("config/pulumi/Pulumi.dev.yaml"),
        "digitalocean:token"
    ));
    // Storing the token gave the file its salt (`pulumi config set --secret` adds it last).
    let shared = std::fs::read_to_string(ws.path().join("config/pulumi/Pulumi.dev.yaml")).unwrap();
    assert_eq!(
        shared.lines().filter(|l| l.starts_with("encryptionsalt: v1:")).count(),
        1,
        "{shared}"
    );
    nowhere_in_plain_text(&ws, "dop_v1_T0ken-secret");
}

#[test]
fn linode_asks_harbor_secrets_first_and_re_asks_a_yes_no_question() {
    let ws = Ws::reference();
    let mut s = session(&ws, &["validate", "-p", "linode", "-s", "dev"], &["LINODE_TOKEN"]);
    // A secret without a default: an empty entry is refused with the reason.
    answer(&mut s, "Linode API token: ", "");
    answer(&mut s, "an answer is required", "linode-T0ken-x");
    answer(&mut s, "Linode API token (again): ", "linode-T0ken-x");
    answer(
        &mut s,
        "Fully qualified domain name (FQDN) for the application: ",
        "mara.example.com",
    );
    answer(
        &mut s,
        "(SOA) email address for the container registry domain: ",
        "ops@example.com",
    );
    answer(&mut s, "Kubernetes version [1.31]: ", "");
    answer(&mut s, "Region [us-central]: ", "");
    answer(&mut s, "Instance type [g6-standard-8]: ", "");
    answer(&mut s, "Node count for the Kubernetes cluster [3]: ", "");
    answer(&mut s, "Enable Kubernetes HA mode [yes]: ", "maybe");
    answer(&mut s, "`maybe` is not yes or no", "no");
    for (question, value) in [
        ("Harbor administrator password", "h-admin-pw1"),
        ("Harbor database password", "h-db-pw1"),
        ("Harbor instance sudo user password", "h-sudo-pw1"),
        ("Prometheus administrator password", "prom-pw1"),
        ("Bank of Sirius Accounts Database password", "acc-pw1"),
        ("Bank of Sirius Ledger Database password", "led-pw1"),
    ] {
        answer(&mut s, &format!("{question}: "), value);
        answer(&mut s, &format!("{question} (again): "), value);
    }
    // The user name is asked visibly and once; the password hidden, and taking its public
    // default is said (and not asked twice).
    answer(&mut s, "Bank of Sirius demo site login username [testuser]: ", "");
    answer(&mut s, "Bank of Sirius demo site login password [password]: ", "");
    let screen = rest(&mut s);
    // Taking the public default is said (`took the default, which the provider file shows to
    // anyone: choose your own`), not asked again; then all is OK.
    let said = crate::support::from_line(&screen.replace("\r\n", "\n"), "took the default");
    crate::snapshot!(ws.path(), "linode_first_run_says_what_it_wrote", said);
    let config = stack_yaml(&ws);
    assert_eq!(config["kubernetes:infra_type"], "LKE");
    assert_eq!(config["linode:k8s_ha"], false);
    assert_eq!(config["linode:soa_email"], "ops@example.com");
    assert!(secure(
        &ws,
        Path::new("projects/services/secrets-linode/Pulumi.dev.yaml"),
        "linode:harbor_sudo_user_password"
    ));
    for plain in ["linode-T0ken-x", "h-admin-pw1", "h-sudo-pw1", "led-pw1"] {
        nowhere_in_plain_text(&ws, plain);
    }
}

#[test]
fn kubeconfig_asks_for_the_file_context_and_cluster() {
    let ws = Ws::reference();
    ws.write("home/.kube/config", crate::support::CLUSTER_KUBECONFIG);
    let mut s = session(
        &ws,
        &["up", "-p", "kubeconfig", "-s", "dev", "--target", "kubeconfig", "--yes"],
        &["KUBECONFIG"],
    );
    answer(
        &mut s,
        "Path to the kubeconfig file of the cluster [~/.kube/config]: ",
        "",
    );
    // The file's contexts are offered, its current-context is the default, and a context it
    // does not hold is asked again.
    answer(&mut s, "Context to use in that kubeconfig (k3s) [k3s]: ", "k3s-default");
    answer(&mut s, "has no context `k3s-default`: one of k3s", "");
    answer(&mut s, "Name of the cluster: ", "k3s");
    closing(&ws, &rest(&mut s), "closing_table_of_a_first_kubeconfig_run");
    let config = stack_yaml(&ws);
    assert_eq!(config["kubernetes:infra_type"], "kubeconfig");
    // `~` is expanded: programs read the file by its absolute path.
    let expected = ws.path().join("home/.kube/config");
    assert_eq!(config["kubernetes:kubeconfig"], expected.to_str().unwrap());
    assert_eq!(config["kubernetes:context_name"], "k3s");
}

#[test]
fn the_passphrase_is_asked_twice_on_first_use_and_never_stored() {
    let ws = Ws::configured("aws");
    let mut s = session(
        &ws,
        &["up", "-p", "aws", "-s", "dev", "--target", "iam", "--yes"],
        &["PULUMI_CONFIG_PASSPHRASE"],
    );
    answer(&mut s, "Passphrase to protect this stack's secrets", "pass-Phrase-7");
    answer(&mut s, "(again): ", "pass-Phrase-7");
    closing(&ws, &rest(&mut s), "closing_table_of_iam_created");
    nowhere_in_plain_text(&ws, "pass-Phrase-7");
    // The next run knows the stack: one question, asked again while what is typed does not
    // open the stack's salt (as `pulumi` does).
    let mut s = session(
        &ws,
        &["up", "-p", "aws", "-s", "dev", "--target", "iam", "--fresh", "--yes"],
        &["PULUMI_CONFIG_PASSPHRASE"],
    );
    answer(&mut s, "Passphrase of this stack's secrets: ", "not-the-one");
    s.expect("incorrect passphrase: it does not open this stack's secrets; try again")
        .unwrap();
    answer(&mut s, "Passphrase of this stack's secrets: ", "pass-Phrase-7");
    let screen = rest(&mut s);
    closing(&ws, &screen, "closing_table_of_iam_again");
    // A run that asked it says how to be asked no more, once it opened the stack; a read asks
    // it too, and says the same.
    let no_more = |screen: &str| crate::support::lines_with(screen, "to be asked no more");
    crate::snapshot!(ws.path(), "passphrase_to_be_asked_no_more", no_more(&screen));
    let mut s = session(&ws, &["output", "iam", "-s", "dev"], &["PULUMI_CONFIG_PASSPHRASE"]);
    answer(&mut s, "Passphrase of this stack's secrets: ", "pass-Phrase-7");
    crate::snapshot!(ws.path(), "passphrase_to_be_asked_no_more", no_more(&rest(&mut s)));
}

#[test]
fn ci_lists_everything_missing_at_once_and_takes_values_from_the_environment() {
    let ws = Ws::reference();
    let mut c = ws.command(&["up", "-p", "do", "-s", "dev"], &[("CI", "true")]);
    for (k, _) in SECRETS {
        c.env_remove(k);
    }
    c.env_remove("DIGITALOCEAN_TOKEN")
        .env_remove("PULUMI_CONFIG_PASSPHRASE");
    let out = c.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    for needle in [
        "lacks `digitalocean:token` (DigitalOcean API token)",
        "fix: set MARA_SECRET_DIGITALOCEAN_TOKEN or DIGITALOCEAN_TOKEN in the environment",
        "lacks `kic-helm:fqdn`",
        "fix: set MARA_CONFIG_KIC_HELM_FQDN in the environment",
        "the secret `prometheus:adminpass` (Prometheus administrator password) is not stored",
        "fix: set MARA_SECRET_PROMETHEUS_ADMINPASS in the environment, or run `runner validate -p do -s dev` at a terminal: it asks for it and stores it encrypted",
        "fix: set MARA_SECRET_DIGITALOCEAN_TOKEN or DIGITALOCEAN_TOKEN in the environment, or run `runner validate -p do -s dev` at a terminal",
        "the secret `sirius:demo_login_pwd`",
        "needs a passphrase to open the stacks' secrets",
    ] {
        assert!(stderr.contains(needle), "stderr lacks {needle:?}:\n{stderr}");
    }
    // The key pair it would make is not said to be stored: nothing was.
    assert!(!stderr.contains("made a new RSA key pair"), "{stderr}");
    // A key with a default is not missing without a terminal: the default applies (this test
    // used to expect `docean:node_count` and the other defaulted keys listed as missing).
    for defaulted in [
        "docean:node_count",
        "docean:region",
        "docean:k8s_version",
        "docean:instance_size",
    ] {
        assert!(!stderr.contains(&format!("lacks `{defaulted}`")), "{stderr}");
    }
    assert!(
        !ws.path().join("config/pulumi/Pulumi.dev.yaml").exists(),
        "nothing is written while anything is missing"
    );

    let values = [
        ("CI", "true"),
        ("DIGITALOCEAN_TOKEN", "dop_v1_from-env"),
        ("MARA_CONFIG_KIC_HELM_FQDN", "ci.example.com"),
        ("MARA_CONFIG_DOCEAN_K8S_VERSION", "1.31.1-do.5"),
        ("MARA_CONFIG_DOCEAN_REGION", "ams3"),
        ("MARA_CONFIG_DOCEAN_INSTANCE_SIZE", "s-2vcpu-4gb"),
    ];
    let run = ws.up("do", &[], &values).expect(0);
    assert!(
        run.stderr.contains("used defaults: docean:node_count=3\n"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("wrote config/pulumi/Pulumi.dev.yaml: kubernetes:infra_type, kic-helm:fqdn"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("(encrypted) in projects/services/secrets/Pulumi.dev.yaml"),
        "{}",
        run.stderr
    );
    let config = stack_yaml(&ws);
    assert_eq!(config["docean:region"], "ams3");
    assert_eq!(
        config["docean:node_count"], 3,
        "the default is written: the next run is explicit"
    );
    assert!(
        config.get("digitalocean:token").is_none(),
        "DIGITALOCEAN_TOKEN is used, not copied"
    );
    assert!(secure(
        &ws,
        Path::new("projects/services/secrets/Pulumi.dev.yaml"),
        "sirius:ledger_pwd"
    ));
}

#[test]
fn a_wrong_type_in_the_stack_file_names_the_key_and_line_and_leaves_the_file_alone() {
    let ws = Ws::configured("aws");
    let path = ws.path().join("config/pulumi/Pulumi.dev.yaml");
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("eks:min_size: 3", "eks:min_size: three");
    std::fs::write(&path, &text).unwrap();
    ws.up("aws", &[], &[])
        .expect(3)
        .stderr_has("config/pulumi/Pulumi.dev.yaml:7: `eks:min_size` is `three`, not a whole number");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
}

#[test]
fn the_example_file_documents_every_question_and_secret_of_every_provider() {
    let example = std::fs::read_to_string(format!(
        "{}/config/pulumi/Pulumi.stackname.yaml.example",
        crate::support::REPO
    ))
    .unwrap();
    let doc: Value = serde_saphyr::from_str(&example).expect("the example is valid YAML");
    assert!(doc["config"].is_object());
    // Every file of providers/: the providers and the layer they include.
    for (provider, file) in crate::support::provider_files() {
        let mut keys: Vec<String> = Vec::new();
        for p in file.get("prompt").and_then(|v| v.as_array()).into_iter().flatten() {
            keys.push(p["key"].as_str().unwrap().to_string());
        }
        for project in file.get("project").and_then(|v| v.as_array()).into_iter().flatten() {
            for s in project.get("secret").and_then(|v| v.as_array()).into_iter().flatten() {
                keys.push(s["key"].as_str().unwrap().to_string());
            }
        }
        for key in keys {
            assert!(
                example.contains(key.as_str()),
                "the example does not mention {key} ({provider})"
            );
        }
    }
}

#[test]
fn ctrl_c_at_a_question_writes_nothing_and_exits_130() {
    let ws = Ws::reference();
    let mut s = session(&ws, &["up", "-p", "do", "-s", "dev"], &["DIGITALOCEAN_TOKEN"]);
    s.expect("DigitalOcean API token: ").unwrap();
    reading(&s);
    s.send(expectrl::ControlCode::EndOfText).unwrap();
    let screen = rest(&mut s);
    assert!(screen.contains("interrupted: no answer was written"), "{screen}");
    let status = format!("{:?}", s.get_process().wait().unwrap());
    assert!(status.starts_with("Exited(") && status.ends_with(", 130)"), "{status}");
    assert!(!ws.path().join("config/pulumi/Pulumi.dev.yaml").exists());
}

#[test]
fn a_backend_that_cannot_be_reached_is_said_before_any_question() {
    let ws = Ws::reference();
    let gone = ws.path().join("no-such-state");
    let url = format!("file://{}", gone.display());
    let mut c = ws.command(
        &["validate", "-p", "aws", "-s", "dev"],
        &[("TERM", "dumb"), ("PULUMI_BACKEND_URL", &url)],
    );
    for (k, _) in SECRETS {
        c.env_remove(k);
    }
    let mut s = expectrl::Session::spawn(c).expect("a pseudo-terminal");
    s.set_expect_timeout(Some(Duration::from_secs(60)));
    let screen = rest(&mut s);
    assert!(
        screen.contains(&format!("cannot reach the state backend {url} (nothing was asked yet)")),
        "{screen}"
    );
    assert!(
        screen.contains(&format!("fix: create the directory (`mkdir -p {}`)", gone.display())),
        "{screen}"
    );
    assert!(!screen.contains("AWS region to use"), "asked anyway:\n{screen}");
    let status = format!("{:?}", s.get_process().wait().unwrap());
    assert!(status.ends_with(", 3)"), "{status}");
    assert!(!ws.path().join("config/pulumi/Pulumi.dev.yaml").exists());
    // Once it exists, the questions come.
    std::fs::create_dir_all(&gone).unwrap();
    let c = ws.command(
        &["validate", "-p", "aws", "-s", "dev"],
        &[("TERM", "dumb"), ("PULUMI_BACKEND_URL", &url)],
    );
    let mut s = expectrl::Session::spawn(c).expect("a pseudo-terminal");
    s.set_expect_timeout(Some(Duration::from_secs(60)));
    s.expect("AWS region to use").unwrap();
    s.send(expectrl::ControlCode::EndOfText).unwrap();
    assert!(rest(&mut s).contains("interrupted: no answer was written"));
}

#[test]
fn non_interactive_never_asks_even_at_a_terminal() {
    let ws = Ws::reference();
    let mut s = session(&ws, &["validate", "-p", "aws", "-s", "dev", "--non-interactive"], &[]);
    let screen = rest(&mut s);
    // `aws:region` has a default, which applies without asking (it used to be listed missing);
    // a secret has none, so it is missing.
    assert!(
        screen.contains("the secret `prometheus:adminpass` (Prometheus administrator password) is not stored"),
        "{screen}"
    );
    assert!(!screen.contains("lacks `aws:region`"), "{screen}");
    assert!(!screen.contains("AWS region to use ["), "asked anyway:\n{screen}");
    assert!(
        !screen.contains("Prometheus administrator password:"),
        "asked anyway:\n{screen}"
    );
}

#[test]
fn destroy_asks_for_no_secret() {
    let ws = Ws::configured("aws");
    let mut c = ws.command(&["destroy", "-p", "aws", "-s", "dev", "--yes"], &[("CI", "true")]);
    for (k, _) in SECRETS {
        c.env_remove(k);
    }
    let out = c.output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn the_example_file_lists_every_project_setting_with_the_programs_default() {
    let example = std::fs::read_to_string(format!(
        "{}/config/pulumi/Pulumi.stackname.yaml.example",
        crate::support::REPO
    ))
    .unwrap();
    let config: Value = serde_saphyr::from_str::<Value>(&example).unwrap()["config"].clone();
    let mut dirs = vec![Path::new(crate::support::REPO).join("projects")];
    let mut checked = 0;
    while let Some(dir) = dirs.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
                continue;
            }
            if p.file_name().is_none_or(|n| n != "Pulumi.yaml") {
                continue;
            }
            let doc: Value = serde_saphyr::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
            let project = doc["name"].as_str().unwrap();
            for (key, decl) in doc["config"].as_object().into_iter().flatten() {
                let Some(default) = decl.get("default") else { continue };
                let full = format!("{project}:{key}");
                assert_eq!(
                    config.get(&full),
                    Some(default),
                    "{}: the example should list {full} with the default",
                    p.display()
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 40, "{checked} settings");
}

#[test]
fn a_key_the_existing_file_lacks_is_asked_and_added_keeping_the_rest() {
    let ws = Ws::configured("aws");
    let path = ws.path().join("config/pulumi/Pulumi.dev.yaml");
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("  eks:max_size: 12\n", "")
        .replace("config:\n", "# our team's settings\nconfig:\n");
    std::fs::write(&path, &text).unwrap();
    // A plan without secrets: only the configuration is asked.
    let mut s = session(
        &ws,
        &["up", "-p", "aws", "-s", "dev", "--target", "eks", "--yes"],
        &["AWS_PROFILE"],
    );
    // Only the missing key is asked (an optional one, like the profile, is not).
    answer(
        &mut s,
        "Maximum number of compute instances for the EKS cluster [12]: ",
        "9",
    );
    let screen = rest(&mut s);
    closing(&ws, &screen, "closing_table_of_eks_and_its_needs");
    assert!(!screen.contains("AWS region to use"), "{screen}");
    let after = std::fs::read_to_string(&path).unwrap();
    // The passphrase salt goes in as the first key, after the file's head comments (where
    // Pulumi's own re-encoding keeps them too).
    assert!(
        after.starts_with("# our team's settings\nencryptionsalt: v1:"),
        "{after}"
    );
    assert!(after.contains("\nconfig:\n  kubernetes:infra_type: AWS\n"), "{after}");
    assert_eq!(stack_yaml(&ws)["eks:max_size"], 9);
}

#[test]
fn ctrl_c_at_a_visible_question_exits_130_every_time() {
    // The terminal library sees Ctrl-C as an interrupted read while the signal arrives too:
    // whichever comes first, the runner ends the same way.
    for _ in 0..10 {
        let ws = Ws::reference();
        let mut s = session(
            &ws,
            &["up", "-p", "aws", "-s", "dev"],
            &["AWS_DEFAULT_REGION", "AWS_REGION", "AWS_PROFILE"],
        );
        s.expect("AWS region to use [us-east-1]: ").unwrap();
        s.send(expectrl::ControlCode::EndOfText).unwrap();
        let screen = rest(&mut s);
        assert!(screen.contains("interrupted: no answer was written"), "{screen}");
        let status = format!("{:?}", s.get_process().wait().unwrap());
        assert!(
            status.starts_with("Exited(") && status.ends_with(", 130)"),
            "{status}\n{screen}"
        );
        assert!(!ws.path().join("config/pulumi/Pulumi.dev.yaml").exists());
    }
}

#[test]
fn the_passphrase_is_not_asked_when_nothing_will_run() {
    let ws = Ws::configured("aws");
    ws.up("aws", &[], &[]).expect(0);
    let mut c = ws.command(&["up", "-p", "aws", "-s", "dev", "--yes"], &[("TERM", "dumb")]);
    c.env_remove("PULUMI_CONFIG_PASSPHRASE");
    let mut s = expectrl::Session::spawn(c).unwrap();
    s.set_expect_timeout(Some(Duration::from_secs(60)));
    let screen = rest(&mut s);
    assert!(!screen.contains("Passphrase"), "asked:\n{screen}");
    closing(&ws, &screen, "closing_table_of_nothing_to_do");
}

#[test]
fn a_dumb_terminal_gets_plain_lines_and_the_time_answering_is_not_the_runs() {
    let ws = Ws::configured("aws");
    let mut s = session(
        &ws,
        &["up", "-p", "aws", "-s", "dev", "--target", "iam", "--yes"],
        &["PULUMI_CONFIG_PASSPHRASE"],
    );
    let asked = s.expect("Passphrase to protect this stack's secrets").unwrap();
    let mut questions = String::from_utf8_lossy(asked.before()).into_owned();
    // A person who takes their time: it is not the run's (a run that counted it would start
    // its record a second before the answers, whatever the machine's speed).
    std::thread::sleep(Duration::from_secs(1));
    s.send_line("a passphrase").unwrap();
    let again = s.expect("(again): ").unwrap();
    questions.push_str(&String::from_utf8_lossy(again.before()));
    reading(&s);
    // The run cannot start before its last answer is sent: its record's start must come after.
    let answered = humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string();
    s.send_line("a passphrase").unwrap();
    let screen = rest(&mut s);
    // TERM=dumb: no live view, lines as they come, no escape codes, around the hidden
    // questions either.
    let run = &screen[screen.find("▶ [iam] up started").unwrap_or_else(|| panic!("{screen}"))..];
    let all = format!("{questions}{screen}");
    assert!(!all.contains('\u{1b}'), "escape codes on a dumb terminal:\n{all:?}");
    assert!(run.contains("Summary: up"), "{run}");
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(ws.path().join(".runner/last-run.json")).unwrap()).unwrap();
    // Times of one format compare as text (`2026-11-22T14:06:03.881Z`).
    let started = summary["started"].as_str().unwrap();
    assert!(
        started >= answered.as_str(),
        "the run's record starts at {started}, before its last answer ({answered}): it counts the answering"
    );
}

#[test]
fn a_kubeconfig_list_offers_one_path() {
    let ws = Ws::reference();
    ws.write("home/.kube/config", crate::support::CLUSTER_KUBECONFIG);
    let c = ws.command(
        &["validate", "-p", "kubeconfig", "-s", "dev"],
        &[("TERM", "dumb"), ("KUBECONFIG", "/nowhere/config:~/.kube/config")],
    );
    let mut s = expectrl::Session::spawn(c).unwrap();
    s.set_expect_timeout(Some(Duration::from_secs(60)));
    // The first file of the list that exists, not the list.
    answer(
        &mut s,
        "Path to the kubeconfig file of the cluster [~/.kube/config]: ",
        "",
    );
    answer(&mut s, "[k3s]: ", "");
    answer(&mut s, "Name of the cluster: ", "k3s");
    let _ = rest(&mut s);
    let expected = ws.path().join("home/.kube/config");
    assert_eq!(stack_yaml(&ws)["kubernetes:kubeconfig"], expected.to_str().unwrap());
}

/// Waits for `question`, keeping all that came before it in `all`, then types `reply` and Enter.
fn ask(s: &mut Session, all: &mut String, question: &str, reply: &str) {
    let found = s
        .expect(question)
        .unwrap_or_else(|e| panic!("never asked {question:?}: {e}\n{all}"));
    all.push_str(&String::from_utf8_lossy(found.before()));
    all.push_str(question);
    reading(s);
    s.send_line(reply).unwrap();
}

#[test]
fn a_dumb_terminal_gets_every_question_as_plain_text() {
    // TERM=dumb shows escape codes as they are: hidden, visible and yes/no questions are plain
    // lines there, answered with Enter.
    let ws = Ws::configured("aws");
    let mut all = String::new();
    let a = &mut all;
    let mut s = session(
        &ws,
        &["up", "-p", "aws", "-s", "dev", "--target", "iam"],
        &["PULUMI_CONFIG_PASSPHRASE"],
    );
    ask(
        &mut s,
        a,
        "Passphrase to protect this stack's secrets (choose one; it is not stored): ",
        "a passphrase",
    );
    ask(&mut s, a, "(again): ", "another");
    ask(&mut s, a, "The two entries differ: type it again.", "a passphrase");
    ask(&mut s, a, "(again): ", "a passphrase");
    ask(&mut s, a, "Go ahead? [y/N] ", "perhaps");
    ask(&mut s, a, "Go ahead? [y/N] ", "y");
    let screen = rest(&mut s);
    assert!(screen.contains("Summary: up"), "{screen}");
    a.push_str(&screen);

    let mut s = session(
        &ws,
        &["destroy", "-p", "aws", "-s", "dev", "--target", "iam"],
        &["PULUMI_CONFIG_PASSPHRASE"],
    );
    ask(&mut s, a, "Passphrase of this stack's secrets: ", "a passphrase");
    ask(&mut s, a, "Type the stack name `dev` to destroy it", "prod");
    let screen = rest(&mut s);
    assert!(screen.contains("not confirmed: nothing was changed"), "{screen}");
    a.push_str(&screen);
    assert!(!all.contains('\u{1b}'), "escape codes on a dumb terminal:\n{all:?}");
    // The passphrase was never echoed.
    assert!(!all.contains("a passphrase") && !all.contains("another"), "{all}");
}

#[test]
fn a_secret_is_stored_exactly_as_given_line_ends_and_all() {
    let ws = Ws::configured("aws");
    // `pulumi config set` drops one trailing newline from its input: the value keeps its own.
    let value = "line one\nline two\n";
    ws.up(
        "aws",
        &["--target", "secrets"],
        &[("MARA_SECRET_PROMETHEUS_ADMINPASS", value)],
    )
    .expect(0);
    let got = ws
        .exec(
            &crate::support::words("pulumi secrets -s dev -- config get prometheus:adminpass --json"),
            &[],
        )
        .expect(0)
        .json();
    assert_eq!(got["value"], value, "{got}");
    assert_eq!(got["secret"], true);
}

#[test]
fn the_chart_mirror_is_asked_only_when_the_example_file_sets_it() {
    let ws = Ws::configured("kubeconfig");
    let path = ws.path().join("config/pulumi/Pulumi.dev.yaml");
    // At a terminal, the secrets given as a CI job gives them: only configuration is asked.
    let at_a_terminal = || {
        let c = ws.command(&["validate", "-p", "kubeconfig", "-s", "dev"], &[("TERM", "dumb")]);
        let mut s = expectrl::Session::spawn(c).expect("a pseudo-terminal");
        s.set_expect_timeout(Some(Duration::from_secs(60)));
        s
    };
    // Nothing in the example file: nothing asked, the file unchanged (each chart's own
    // repository, as the programs say).
    let before = std::fs::read_to_string(&path).unwrap();
    let screen = rest(&mut at_a_terminal());
    assert!(screen.contains("All configuration is OK"), "{screen}");
    assert!(!screen.contains("Helm repository"), "{screen}");
    let after = std::fs::read_to_string(&path).unwrap();
    assert!(!after.contains("chart_mirror"), "{after}");
    assert!(before.lines().all(|l| after.contains(l)), "{after}");
    // A site's example file names its mirror: asked, its value offered and taken.
    let mirror = "https://harbor.example.com/chartrepo/mara";
    ws.write(
        "config/pulumi/Pulumi.stackname.yaml.example",
        &format!("config:\n  kubernetes:chart_mirror: {mirror}\n"),
    );
    let mut s = at_a_terminal();
    answer(
        &mut s,
        &format!("Helm repository that serves every chart (your site's mirror) [{mirror}]: "),
        "",
    );
    let screen = rest(&mut s);
    assert!(screen.contains("All configuration is OK"), "{screen}");
    assert_eq!(stack_yaml(&ws)["kubernetes:chart_mirror"], mirror);
}

#[test]
fn a_secret_or_a_value_the_environment_changes_is_not_dropped_without_a_word() {
    let ws = Ws::configured("aws");
    ws.up("aws", &["--target", "secrets"], &[]).expect(0);
    // The same values again: nothing said.
    let run = ws.up("aws", &["--target", "secrets"], &[]).expect(0);
    assert!(!run.stderr.contains("differs"), "{}", run.stderr);
    // A secret rotated in the CI's store: stored, said, and the secrets project runs again.
    let rotated = [("MARA_SECRET_SIRIUS_LEDGER_PWD", "rotated-S3cret")];
    let run = ws.up("aws", &["--target", "secrets"], &rotated).expect(0);
    assert!(
        run.stderr.contains(
            "MARA_SECRET_SIRIUS_LEDGER_PWD differs from the stored `sirius:ledger_pwd`: the new value is stored"
        ),
        "{}",
        run.stderr
    );
    assert!(
        !run.stderr.contains("rotated-S3cret"),
        "the secret was printed:\n{}",
        run.stderr
    );
    let got = ws
        .exec(
            &crate::support::words("pulumi secrets -s dev -- config get sirius:ledger_pwd"),
            &[("MARA_SECRET_SIRIUS_LEDGER_PWD", "rotated-S3cret")],
        )
        .expect(0);
    assert_eq!(got.stdout.trim(), "rotated-S3cret");
    // A configuration value given in the environment while the stack file keeps another: the
    // file's is used, and that is said.
    let run = ws
        .up("aws", &["--target", "secrets"], &[("MARA_CONFIG_EKS_MIN_SIZE", "5")])
        .expect(0);
    assert!(
        run.stderr.contains(
            "MARA_CONFIG_EKS_MIN_SIZE=5 differs from `eks:min_size` in config/pulumi/Pulumi.dev.yaml (3), which is used"
        ),
        "{}",
        run.stderr
    );
}

#[test]
fn a_program_pulumi_yaml_would_refuse_is_said_before_any_question() {
    let ws = Ws::reference();
    ws.edit(
        "projects/services/logagent/Pulumi.yaml",
        "timeout: ${helm_timeout}",
        "timeout: ${helm_timout}",
    );
    let mut s = session(
        &ws,
        &["validate", "-p", "aws", "-s", "dev"],
        &crate::support::words("AWS_DEFAULT_REGION AWS_REGION AWS_PROFILE PULUMI_CONFIG_PASSPHRASE"),
    );
    let screen = rest(&mut s);
    assert!(
        screen.contains("`helm_timout` is read, but no resource, variable or config key of `logagent` declares it"),
        "{screen}"
    );
    assert!(
        !screen.contains("AWS region") && !screen.contains("Passphrase"),
        "asked first:\n{screen}"
    );
    assert!(
        !ws.path().join("config/pulumi/Pulumi.dev.yaml").exists(),
        "nothing written"
    );
}

#[test]
fn a_failure_to_store_keeps_the_typed_secrets_and_stores_them_again_when_asked() {
    let ws = Ws::reference();
    // A `pulumi` whose `config set` fails while the marker is there (a backend that refuses).
    let bin = ws.path().join("flaky-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let marker = ws.path().join("refuse-store");
    std::fs::write(&marker, "").unwrap();
    let wrapper = bin.join("pulumi");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\ncase \" $* \" in *\" config set \"*) if [ -e '{}' ]; then echo 'error: could not write the stack: injected' >&2; exit 1; fi;; esac\nexec '{}' \"$@\"\n",
            marker.display(),
            crate::support::standin_dir().join("pulumi").display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&wrapper, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}:{}",
        bin.display(),
        crate::support::fake_clis().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut c = ws.command(
        &["up", "-p", "do", "-s", "dev", "--target", "container-registry", "--yes"],
        &[("TERM", "dumb"), ("PATH", &path)],
    );
    for (k, _) in SECRETS {
        c.env_remove(k);
    }
    c.env_remove("CI").env_remove("DIGITALOCEAN_TOKEN");
    let mut s = expectrl::Session::spawn(c).expect("a pseudo-terminal");
    s.set_expect_timeout(Some(Duration::from_secs(60)));
    answer(&mut s, "DigitalOcean API token: ", "dop_v1_Kept-token");
    answer(&mut s, "DigitalOcean API token (again): ", "dop_v1_Kept-token");
    answer(
        &mut s,
        "Fully qualified domain name (FQDN) for the application: ",
        "mara.example.com",
    );
    answer(&mut s, "Kubernetes version [1.31.1-do.5]: ", "");
    answer(&mut s, "Region [sfo3]: ", "");
    answer(&mut s, "Instance size [s-4vcpu-8gb]: ", "");
    answer(&mut s, "Node count for the Kubernetes cluster [3]: ", "");
    // Storing fails: said with its cause, the answers kept; fixed, stored on "y".
    s.expect("could not write the stack: injected").unwrap();
    s.expect("The answers are kept: fix it, then store them again? [y/N]")
        .unwrap();
    std::fs::remove_file(&marker).unwrap();
    s.send_line("y").unwrap();
    let screen = rest(&mut s);
    let stored = crate::support::lines_with(&screen, "stored digitalocean:token");
    crate::snapshot!(ws.path(), "stored_once_the_failure_is_fixed", stored);
    closing(&ws, &screen, "closing_table_of_a_first_do_run");
    assert!(!screen.contains("DigitalOcean API token:"), "asked again:\n{screen}");
    assert!(secure(
        &ws,
        Path::new("config/pulumi/Pulumi.dev.yaml"),
        "digitalocean:token"
    ));
    nowhere_in_plain_text(&ws, "dop_v1_Kept-token");
}
