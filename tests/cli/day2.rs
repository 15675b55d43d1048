//! The questions of day two, through the binary with the stand-in: `status`, `output`, `logs`,
//! `pulumi PROJECT -- ARGS`, `drift`, `--exclude`.

use std::time::{Duration, Instant};

use crate::support::Ws;

#[test]
fn logs_keeps_one_log_per_operation_and_follows_a_running_project() {
    let ws = Ws::configured("aws");
    // Follow eks while a run is going: the log does not exist yet, so it waits for it.
    let up = ws
        .command(
            &["up", "-p", "aws", "-s", "dev", "--target", "eks"],
            &[("PULUMI_STANDIN_DELAY_MS", "eks=1500")],
        )
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let follow = ws.exec(&["logs", "eks", "-s", "dev", "--follow"], &[]).expect(0);
    assert!(
        follow.stdout.contains("Updating (dev):")
            && follow.stdout.trim_end().ends_with(&format!(
                "== succeeded {}",
                follow.stdout.trim_end().rsplit(' ').next().unwrap()
            )),
        "followed to the end line:\n{}",
        follow.stdout
    );
    assert!(follow.stderr.contains("waiting for eks to start"), "{}", follow.stderr);
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "follow ended with the operation"
    );
    assert!(up.wait_with_output().unwrap().status.success());

    ws.exec(&["destroy", "-p", "aws", "-s", "dev", "--target", "eks", "--yes"], &[])
        .expect(0);
    // The destroy did not overwrite the up's log, and the most recent one is shown; without -p
    // the provider comes from the stack file.
    let last = ws.exec(&["logs", "eks", "-s", "dev"], &[]).expect(0);
    assert!(
        last.stderr.contains("log: .runner/dev/logs/eks.destroy.log"),
        "{}",
        last.stderr
    );
    assert!(last.stdout.starts_with("== destroy eks started "), "{}", last.stdout);
    assert!(last.stdout.contains("Destroying (dev):"), "{}", last.stdout);
    let up_log = ws
        .exec(&["logs", "eks", "-s", "dev", "--operation", "up"], &[])
        .expect(0);
    assert!(
        up_log.stderr.contains("log: .runner/dev/logs/eks.up.log"),
        "{}",
        up_log.stderr
    );
    assert!(up_log.stdout.contains("Updating (dev):"), "{}", up_log.stdout);

    // What has no log, and what is no project, say so with the fix.
    ws.exec(&["logs", "ecr", "-s", "dev"], &[])
        .expect(1)
        .stderr_has("ecr has no log in .runner/dev/logs yet")
        .stderr_has("runner up -p aws -s dev --target ecr");
    ws.exec(&["logs", "ekss", "-s", "dev"], &[])
        .expect(2)
        .stderr_has("provider aws has no project `ekss`")
        .stderr_has("did you mean `eks`?");
}
