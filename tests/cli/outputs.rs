//! The files a person names for the runner to write (`--report`, `--junit`, `--summary`,
//! `report -o`): a symbolic link or a directory is refused before anything runs, a device or a
//! pipe is written into and never replaced, `-` is standard output.

use std::os::unix::fs::{FileTypeExt as _, symlink};
use std::process::{Command, Stdio};

use crate::support::{Ws, tool};
use test_requires::requires;

fn ran_nothing(ws: &Ws) -> bool {
    ws.invocations().iter().all(|i| i.command() != "up")
}

#[test]
fn a_link_or_a_directory_named_as_an_output_is_refused_before_anything_runs() {
    let ws = Ws::configured("kubeconfig");
    ws.write("victim.txt", "precious\n");
    symlink("victim.txt", ws.path().join("link.out")).unwrap();
    std::fs::create_dir(ws.path().join("dir.out")).unwrap();
    for flag in ["--report", "--junit", "--summary"] {
        for (path, said) in [("link.out", "is a symbolic link"), ("dir.out", "is a directory")] {
            ws.clear_invocations();
            let run = ws.up("kubeconfig", &[flag, path], &[]).expect(2);
            assert!(
                run.stderr.contains(&format!("{flag} {path}: the path {said}")),
                "{flag} {path}: {}",
                run.stderr
            );
            assert!(ran_nothing(&ws), "{flag} {path}: a project ran");
        }
    }
    assert_eq!(
        std::fs::read_to_string(ws.path().join("victim.txt")).unwrap(),
        "precious\n"
    );
    assert!(
        std::fs::symlink_metadata(ws.path().join("link.out"))
            .unwrap()
            .file_type()
            .is_symlink()
    );

    ws.up("kubeconfig", &[], &[]).expect(0);
    let run = ws.exec(&["report", "-s", "dev", "-o", "link.out"], &[]).expect(2);
    // The path is a symbolic link: name the file itself.
    crate::snapshot!(ws.path(), "report_refuses_a_link", run.stderr);
    assert_eq!(
        std::fs::read_to_string(ws.path().join("victim.txt")).unwrap(),
        "precious\n"
    );
}

#[test]
fn a_pipe_is_written_into_never_replaced_and_dash_is_standard_output() {
    let ws = Ws::configured("kubeconfig");
    ws.up("kubeconfig", &[], &[]).expect(0);
    // `-o -`: the report on standard output, nothing else there.
    let run = ws.exec(&["report", "-s", "dev", "-o", "-"], &[]).expect(0);
    assert!(
        run.stdout.starts_with("<!DOCTYPE html>"),
        "{}",
        &run.stdout[..run.stdout.len().min(200)]
    );
    assert!(run.stdout.trim_end().ends_with("</html>"));
    // A FIFO with a reader gets the report; it stays a FIFO.
    let fifo = ws.path().join("report.fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let reader = Command::new("cat").arg(&fifo).stdout(Stdio::piped()).spawn().unwrap();
    let run = ws.exec(&["report", "-s", "dev", "-o", "report.fifo"], &[]).expect(0);
    let read = reader.wait_with_output().unwrap();
    assert!(
        String::from_utf8_lossy(&read.stdout).starts_with("<!DOCTYPE html>"),
        "{}",
        run.stderr
    );
    assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
    // Without a reader: said, not waited on for ever.
    let run = ws.exec(&["report", "-s", "dev", "-o", "report.fifo"], &[]).expect(2);
    assert!(run.stderr.contains("is a pipe nobody reads"), "{}", run.stderr);
    assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
    // /dev/stdout (a link of the system's) into a pipe.
    let run = ws.exec(&["report", "-s", "dev", "-o", "/dev/stdout"], &[]).expect(0);
    assert!(run.stdout.starts_with("<!DOCTYPE html>"), "{}", run.stderr);
    // A run's JUnit report into /dev/null: written into, the device left as it is.
    ws.up(
        "kubeconfig",
        &["--fresh", "--junit", "/dev/null", "--summary", "-"],
        &[],
    )
    .expect(0);
    assert!(std::fs::metadata("/dev/null").unwrap().file_type().is_char_device());
}

/// As root in a CI container, `/dev/null` itself: in a private mount namespace with a device of
/// its own, so the machine's is never at stake.
#[requires("unshare")]
#[test]
fn dev_null_stays_a_device_as_root() {
    if tool("unshare").is_none() {
        return;
    }
    let root = Command::new("id").arg("-u").output().unwrap();
    if String::from_utf8_lossy(&root.stdout).trim() != "0" {
        eprintln!("skipped: only root can make a device node");
        return;
    }
    let ws = Ws::configured("kubeconfig");
    ws.up("kubeconfig", &[], &[]).expect(0);
    let runner = crate::support::RUNNER;
    let script = format!(
        "mount -t tmpfs tmpfs /dev && mknod -m 666 /dev/null c 1 3 && mknod -m 666 /dev/full c 1 7 && \
         {runner} report -s dev -o /dev/null; echo \"null: $?\"; \
         {runner} report -s dev -o /dev/full; echo \"full: $?\"; stat -c '%F' /dev/null /dev/full"
    );
    // The runner's test environment (what it removes too) for the runs of the script.
    let mut unshare = Command::new("unshare");
    crate::support::copy_env(&ws.command(&[], &[]), &mut unshare);
    let out = unshare
        .args(["-m", "--propagation", "private", "sh", "-c", &script])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("null: 0"),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // /dev/full refuses the write (no space): said, exit 2, the device unchanged.
    assert!(
        stdout.contains("full: 2"),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        stdout.lines().filter(|l| *l == "character special file").count(),
        2,
        "{stdout}"
    );
}

/// `report -o /dev/stdout >> log` (and `--summary /dev/stdout`): the report goes after what the
/// log held, through the runner's own descriptor, as the shell's `>>` asks; a regular file that
/// merely lives under /dev (`/dev/shm`) is replaced whole, no old tail kept.
#[test]
fn dev_stdout_appends_where_the_shell_appends_and_a_file_under_dev_is_replaced() {
    let ws = Ws::configured("kubeconfig");
    ws.up("kubeconfig", &[], &[]).expect(0);
    let log = ws.path().join("build.log");
    std::fs::write(&log, "earlier lines\n").unwrap();
    for args in [
        vec!["report", "-s", "dev", "-o", "/dev/stdout"],
        vec!["report", "-s", "dev", "-o", "/dev/fd/1"],
        vec!["report", "-s", "dev", "-o", "/proc/self/fd/1"],
    ] {
        let appending = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
        let mut c = ws.command(&args, &[]);
        c.stdout(appending);
        assert!(c.status().unwrap().success(), "{args:?}");
    }
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        text.starts_with("earlier lines\n<!DOCTYPE html>"),
        "{}",
        &text[..text.len().min(200)]
    );
    assert_eq!(text.matches("<!DOCTYPE html>").count(), 3);
    if std::path::Path::new("/dev/shm").is_dir() {
        let shm = tempfile::Builder::new()
            .prefix("runner-report-")
            .tempfile_in("/dev/shm")
            .unwrap();
        std::fs::write(shm.path(), "x".repeat(4 << 20)).unwrap();
        ws.exec(&["report", "-s", "dev", "-o", shm.path().to_str().unwrap()], &[])
            .expect(0);
        let written = std::fs::read_to_string(shm.path()).unwrap();
        assert!(written.trim_end().ends_with("</html>"), "the old tail stayed");
        assert!(!written.contains("xxxx"));
    }
}

/// `report` where its default file cannot be written (a read-only workspace; here a directory
/// in the way, which stops root as well): said with the fix, another place or standard output.
#[test]
fn a_report_that_cannot_be_written_where_it_goes_says_where_else() {
    let ws = Ws::configured("kubeconfig");
    ws.up("kubeconfig", &[], &[]).expect(0);
    let _ = std::fs::remove_file(ws.path().join(".runner/last-run.html"));
    std::fs::create_dir_all(ws.path().join(".runner/last-run.html/x")).unwrap();
    ws.exec(&["report", "-s", "dev"], &[])
        .expect(1)
        .stderr_has("cannot write the report to .runner/last-run.html")
        .stderr_has("`runner report -o FILE`")
        .stderr_has("`-o -` for standard output");
}
