//! Global flags before or after the command, workspace discovery, help, version, completions,
//! colour.

use crate::support::{Ws, redactions, run, runner};

#[test]
fn global_flags_go_before_or_after_the_command_and_are_lower_cased() {
    let ws = Ws::reference();
    let after = ws.run(&["show-plan", "-p", "aws", "-s", "dev"]).expect(0);
    let before = ws.run(&["-p", "aws", "-s", "dev", "show-plan"]).expect(0);
    let upper = ws.run(&["--provider", "AWS", "--stack", "DEV", "show-plan"]).expect(0);
    assert_eq!(after.stdout, before.stdout);
    assert_eq!(after.stdout, upper.stdout);
    let mara = ws.run(&["-d", "-b", "boring", "-p", "do", "show-execution"]).expect(0);
    assert!(mara.stdout.contains("provider do"));
    assert!(mara.stderr.contains("debug: workspace:"), "{}", mara.stderr);
    ws.run(&["-b", "loud", "show-plan", "-p", "aws"]).expect(2);
}

#[test]
fn the_workspace_is_the_nearest_ancestor_with_providers_or_the_flag() {
    let ws = Ws::reference();
    let inside = ws.path().join("projects/services/logstore");
    let plan = run(ws.command(&["show-plan", "-p", "aws"], &[]).current_dir(&inside)).expect(0);
    assert!(plan.stdout.contains("16 projects"));

    let outside = tempfile::tempdir().unwrap();
    run(&mut runner(outside.path(), &["show-plan", "-p", "aws"]))
        .expect(2)
        .stderr_has("no runner workspace here")
        .stderr_has("--workspace DIR");
    let dir = ws.path().to_str().unwrap();
    run(&mut runner(
        outside.path(),
        &["--workspace", dir, "show-plan", "-p", "aws"],
    ))
    .expect(0);
    ws.run(&["--workspace", "projects", "list-providers"])
        .expect(2)
        .stderr_has("is not a runner workspace: it has no providers/ directory");
}

#[test]
fn help_shows_an_example_for_each_command_and_version_is_printed() {
    let ws = Ws::reference();
    // The whole of it, as a person reads it: the first steps, the commands, the options, the
    // examples (`runner show-plan -p aws`, `runner list-providers`, `runner completions bash`),
    // the exit codes.
    let help = ws.run(&["--help"]).expect(0);
    redactions(ws.path()).bind(|| insta::assert_snapshot!("help", help.stdout));
    // Each command's, with its examples (`runner show-plan -p aws`, `runner list-providers`,
    // `runner completions zsh`).
    for command in ["show-plan", "list-providers", "completions"] {
        let run = ws.run(&[command, "--help"]).expect(0);
        redactions(ws.path()).bind(|| insta::assert_snapshot!(format!("{command}_help"), run.stdout));
    }
    let version = ws.run(&["--version"]).expect(0);
    assert_eq!(version.stdout.trim(), format!("runner {}", env!("CARGO_PKG_VERSION")));
}

#[test]
fn completions_for_bash_zsh_and_fish() {
    let ws = Ws::reference();
    for (shell, marker) in [
        ("bash", "complete -F"),
        ("zsh", "#compdef runner"),
        ("fish", "complete -c runner"),
    ] {
        let run = ws.run(&["completions", shell]).expect(0);
        assert!(
            run.stdout.contains(marker),
            "{shell}: {}",
            &run.stdout[..200.min(run.stdout.len())]
        );
        assert!(run.stdout.contains("show-plan"), "{shell} completion lacks show-plan");
    }
    ws.run(&["completions", "powershell"]).expect(2);
}

#[test]
fn the_man_page_is_made_from_the_commands() {
    let ws = Ws::reference();
    // The page (`.TH runner 1`, NAME, SYNOPSIS, the options, the SUBCOMMANDS).
    let page = ws.run(&["man"]).expect(0).stdout;
    redactions(ws.path()).bind(|| insta::assert_snapshot!("man_runner", &page));
    // One command's page, as `man runner-up` shows it (its options); a word that is no command
    // is named.
    for (args, name) in [
        (&["man", "up"][..], "man_up"),
        (&["man", "export", "pko"], "man_export_pko"),
    ] {
        let page = ws.run(args).expect(0).stdout;
        redactions(ws.path()).bind(|| insta::assert_snapshot!(name, page));
    }
    ws.run(&["man", "upp"])
        .expect(2)
        .stderr_has("`runner upp` is no command: no man page");
    // A word that drives a terminal is shown (`runner ^[[2Jx`), not obeyed.
    let hostile = ws.run(&["man", "\u{1b}[2Jx"]).expect(2);
    redactions(ws.path()).bind(|| insta::assert_snapshot!("man_of_a_hostile_word", &hostile.stderr));
    assert!(!hostile.stderr.contains('\u{1b}'), "{:?}", hostile.stderr);
    // groff, where it is installed, reads it without a warning.
    if crate::support::have("groff") {
        let mut groff = std::process::Command::new("groff")
            .args(["-man", "-Tutf8", "-ww", "-z"])
            .stdin(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        std::io::Write::write_all(&mut groff.stdin.take().unwrap(), page.as_bytes()).unwrap();
        let out = groff.wait_with_output().unwrap();
        assert!(
            out.status.success() && out.stderr.is_empty(),
            "groff: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn man_dir_writes_a_page_per_command_as_man_finds_them() {
    let ws = Ws::reference();
    ws.run(&["man", "--dir", "man/man1"])
        .expect(0)
        .stderr_has("wrote 26 man pages to man/man1");
    let dir = ws.path().join("man/man1");
    // Each file's title is its name, as man finds it (`.TH runner-up 1`).
    let titles: Vec<String> = ["runner.1", "runner-up.1", "runner-drift.1", "runner-export-pko.1"]
        .iter()
        .map(|file| {
            let page = std::fs::read_to_string(dir.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
            format!("{file}: {}", crate::support::lines_with(&page, ".TH "))
        })
        .collect();
    redactions(ws.path()).bind(|| insta::assert_snapshot!("man_dir_titles", titles.join("\n")));
    let drift = std::fs::read_to_string(dir.join("runner-drift.1")).unwrap();
    assert!(drift.contains("\\-\\-refresh"), "drift's own flag is on its page");
}

/// A page's name planted as a link to another file (`runner-up.1 → victim`): refused before
/// any page is written, the link and its target as they were; a page there already is replaced,
/// its mode kept.
#[test]
fn man_dir_writes_through_no_link() {
    use std::os::unix::fs::PermissionsExt as _;
    let ws = Ws::reference();
    let dir = ws.path().join("man/man1");
    std::fs::create_dir_all(&dir).unwrap();
    let victim = ws.path().join("victim");
    std::fs::write(&victim, "precious\n").unwrap();
    std::os::unix::fs::symlink(&victim, dir.join("runner-up.1")).unwrap();
    // Refused as `report -o LINK` is: exit 2, with the fix.
    ws.run(&["man", "--dir", "man/man1"])
        .expect(2)
        .stderr_has("runner-up.1 is a symbolic link: the man pages are never written through one")
        .stderr_has("remove it, or give another --dir");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1, "no page was written");
    std::fs::remove_file(dir.join("runner-up.1")).unwrap();
    std::fs::write(dir.join("runner.1"), "old").unwrap();
    std::fs::set_permissions(dir.join("runner.1"), std::fs::Permissions::from_mode(0o640)).unwrap();
    ws.run(&["man", "--dir", "man/man1"]).expect(0);
    assert!(
        std::fs::read_to_string(dir.join("runner.1"))
            .unwrap()
            .starts_with(".ie")
    );
    let mode = std::fs::metadata(dir.join("runner.1")).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o640);
}

#[test]
fn color_follows_the_flag_and_no_color() {
    let ws = Ws::reference();
    let plain = ws.run(&["show-plan", "-p", "aws"]).expect(0);
    assert!(!plain.stdout.contains('\u{1b}'));
    let always = ws.run(&["show-plan", "-p", "aws", "--color", "always"]).expect(0);
    assert!(always.stdout.contains("\u{1b}["));
    // Forced colour in the environment (set after the scrub), and the flag says never.
    let never = ws
        .exec(
            &["show-plan", "-p", "aws", "--color", "never"],
            &[("CLICOLOR_FORCE", "1")],
        )
        .expect(0);
    assert!(!never.stdout.contains('\u{1b}'));
}

#[test]
fn a_runs_help_groups_its_options_under_headings_and_ends_with_examples() {
    let ws = crate::support::Ws::reference();
    let help = ws.run(&["up", "--help"]).expect(0).stdout;
    redactions(ws.path()).bind(|| insta::assert_snapshot!("up_help", help));
    // What the snapshot shows, as rules a new option must keep.
    let at = |heading: &str| {
        help.find(&format!("\n{heading}:\n"))
            .unwrap_or_else(|| panic!("no {heading}:\n{help}"))
    };
    // In this order: what runs, how, what it writes, how it stops, then the global options.
    let order = ["Selection", "Running", "Output", "Stopping", "Global options"].map(at);
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{help}");
    assert!(help[order[0]..order[1]].contains("--target"), "{help}");
    assert!(help[order[3]..order[4]].contains("--grace"), "{help}");
    assert!(help[order[4]..].contains("--banner-type"), "{help}");
    let examples = help.rfind("\nExamples:\n").expect("examples");
    assert!(examples > order[4], "examples after the options:\n{help}");
    assert!(
        help[examples..].lines().skip(2).all(|l| l.contains("runner ")),
        "{help}"
    );
}

#[test]
fn a_commands_help_leaves_out_the_global_options_that_mean_nothing_to_it() {
    let ws = crate::support::Ws::reference();
    let unaffected = ["--banner-type", "--switch-stack", "--non-interactive"];
    // By any way of asking: -h, --help, `help COMMAND`, with global flags before the command.
    for args in [
        &["status", "-h"][..],
        &["status", "--help"],
        &["help", "status"],
        &["-b", "boring", "-s", "dev", "status", "--help"],
        &["logs", "--help"],
        &["show-plan", "-h"],
    ] {
        let help = ws.run(args).expect(0).stdout;
        assert!(
            help.contains("Global options:") && help.contains("--stack"),
            "{args:?}:\n{help}"
        );
        for flag in unaffected {
            assert!(!help.contains(flag), "{flag} in the help of {args:?}:\n{help}");
        }
    }
    let version = ws.run(&["version", "--help"]).expect(0).stdout;
    assert!(!version.contains("Global options:"), "{version}");
    // The runner's version is the top level's (`runner --version`, `runner version`), not a
    // flag of every command.
    for args in [&["up", "--help"][..], &["drift", "-h"], &["export", "pko", "--help"]] {
        let help = ws.run(args).expect(0).stdout;
        assert!(!help.contains("-V, --version"), "{args:?}:\n{help}");
    }
    // Where they apply, they are there.
    for (args, flag) in [
        (&["up", "-h"][..], "--banner-type"),
        (&["drift", "--help"], "--switch-stack"),
        (&["output", "--help"], "--non-interactive"),
    ] {
        assert!(ws.run(args).expect(0).stdout.contains(flag), "{flag} not in {args:?}");
    }
    // Still accepted anywhere, as MARA's flags before the command must be.
    ws.run(&["-b", "boring", "list-providers"]).expect(0);
}
