//! What `pulumi` says, matched in one place: the CLI's messages (v3.142 to v3.274 alike) that
//! the runner acts on. No other module matches the engine's wording; each asks [`says`] (or
//! [`classify`]) which of these a process's standard error holds.

/// A message of the CLI the runner acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::VariantArray)]
pub(crate) enum Message {
    /// `error: the stack is currently locked by N lock(s). Either wait …` followed by one line
    /// per lock (`pkg/backend/diy/lock.go`).
    StackLocked,
    /// `error: no stack named 'dev' found`: selecting (or operating on) a stack that does not
    /// exist.
    NoStack,
    /// `error: stack 'organization/secrets/ci' already exists`: `stack select --create` lost a
    /// race, another process creating the same stack between its look and its creation (jobs
    /// of an export starting at once).
    StackExists,
    /// An error naming a file of the backend's lock directory (`.pulumi/locks/…`): on a bucket,
    /// a lock another process took or released while this one read the directory (`blob (key
    /// ".pulumi/locks/…json") (code=NotFound)` when it was gone by the time it was read).
    LockFile,
    /// `error: no changes were expected for preview but changes were proposed`
    /// (`--expect-no-changes`, `pkg/backend/backenderr/backenderr.go`).
    NoChangesExpected,
    /// A file in a stack's lock directory that is not JSON, which `pulumi` reads as a lock:
    /// Go's JSON decoder's errors.
    UnreadableLock,
    /// `incorrect passphrase` (`pkg/secrets/passphrase`).
    IncorrectPassphrase,
    /// The Kubernetes provider's `Server-Side Apply field conflict detected`: a field it applies
    /// is owned by another field manager (`kubectl edit`, `kubectl label`…), so it will not set
    /// it without being told to force (`pkg/await/await.go`, `patchForce`). Each conflict is a
    /// line `conflict with "MANAGER" using v1: .metadata.labels.x` ([`field_conflicts`]).
    FieldConflict,
    /// Helm's `uninstall: Release not loaded: NAME: release: not found`: a release the state
    /// holds is gone from the cluster already (removed outside Pulumi), so its delete fails
    /// until a refresh takes that into the state.
    ReleaseGone,
}

impl Message {
    const ALL: &'static [Message] = <Message as strum::VariantArray>::VARIANTS;

    /// The texts that tell it (any one).
    fn texts(self) -> &'static [&'static str] {
        match self {
            Message::StackLocked => &["the stack is currently locked"],
            Message::NoStack => &["no stack named"],
            Message::StackExists => &["already exists"],
            Message::LockFile => &[".pulumi/locks/"],
            Message::NoChangesExpected => &["no changes were expected"],
            Message::UnreadableLock => &[
                "unexpected end of JSON input",
                "looking for beginning of value",
                "invalid character",
            ],
            Message::IncorrectPassphrase => &["incorrect passphrase"],
            Message::FieldConflict => &["Server-Side Apply field conflict detected"],
            Message::ReleaseGone => &["release: not found"],
        }
    }
}

/// A log line of the Go cloud SDK inside `pulumi` (its S3 client against some servers:
/// `SDK 2026/11/29 03:35:36 WARN Response has no supported checksum…`): how the client talks to
/// the bucket, not how the work goes, so a live view does not show it as a project's progress.
pub(crate) fn sdk_log(line: &str) -> bool {
    line.strip_prefix("SDK ").is_some_and(|rest| {
        let date = rest.get(..10).unwrap_or_default();
        date.len() == 10
            && date
                .chars()
                .enumerate()
                .all(|(i, c)| if i == 4 || i == 7 { c == '/' } else { c.is_ascii_digit() })
    })
}

/// A field of a Kubernetes object that another field manager owns, as the provider's conflict
/// error names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FieldConflict {
    /// The other manager: `kubectl-label`, `kubectl-edit`, `helm`…
    pub manager: String,
    /// The field, as the API server spells it: `.metadata.labels.mara/cluster`.
    pub field: String,
}

/// The conflicts of [`Message::FieldConflict`] errors in `stderr`: each `conflict with
/// "MANAGER"[ using VERSION]: FIELD`, in order, once each.
pub(crate) fn field_conflicts(stderr: &str) -> Vec<FieldConflict> {
    const MARK: &str = "conflict with \"";
    let mut found: Vec<FieldConflict> = Vec::new();
    for line in stderr.lines() {
        let mut rest = line;
        while let Some(at) = rest.find(MARK) {
            rest = &rest[at + MARK.len()..];
            let Some((manager, after)) = rest.split_once('"') else {
                break;
            };
            let Some((_, field)) = after.split_once(": ") else {
                break;
            };
            // Several conflicts share a line: `…: .a, conflict with "x": .b`.
            let field = field.split(", conflict with").next().unwrap_or(field).trim();
            let conflict = FieldConflict {
                manager: manager.to_string(),
                field: field.to_string(),
            };
            if !field.is_empty() && !found.contains(&conflict) {
                found.push(conflict);
            }
            rest = after;
        }
    }
    found
}

/// Where a program's error is, as Pulumi YAML (HCL's diagnostic writer) says it:
/// `  on Pulumi.yaml line 17:` or `  on Pulumi.yaml line 17, in resources:`. The first such line.
pub(crate) fn program_line<'a>(lines: impl IntoIterator<Item = &'a str>) -> Option<(String, u32)> {
    lines.into_iter().find_map(|l| {
        let rest = l.trim().strip_prefix("on ")?;
        let (file, after) = rest.split_once(" line ")?;
        let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
        let tail = &after[digits.len()..];
        (!file.is_empty() && !file.contains(char::is_whitespace) && (tail.starts_with(':') || tail.starts_with(", ")))
            .then_some(())?;
        Some((file.to_string(), digits.parse().ok()?))
    })
}

/// Every message `stderr` holds.
pub(crate) fn classify(stderr: &str) -> Vec<Message> {
    Message::ALL.iter().copied().filter(|m| says(stderr, *m)).collect()
}

/// Whether `stderr` holds `message`.
pub(crate) fn says(stderr: &str, message: Message) -> bool {
    message.texts().iter().any(|t| stderr.contains(t))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_cloud_sdks_log_lines_are_told_apart() {
        assert!(super::sdk_log(
            "SDK 2026/11/29 03:35:36 WARN Response has no supported checksum. Not validating response payload."
        ));
        assert!(!super::sdk_log("SDK version 2 is used"));
        assert!(!super::sdk_log("  + aws:s3:Bucket  state  created"));
    }

    use super::*;

    #[test]
    fn the_program_line_is_read_as_pulumi_yaml_places_it() {
        let lines = [
            "Error: resource, variable, or config value \"retentionz\" not found",
            "on Pulumi.yaml line 17:",
            "17:       retention: ${retentionz}",
        ];
        assert_eq!(program_line(lines), Some(("Pulumi.yaml".into(), 17)));
        assert_eq!(
            program_line(["  on Main.yaml line 3, in resources:"]),
            Some(("Main.yaml".into(), 3))
        );
        assert_eq!(program_line(["the agent runs on node line 4 now"]), None);
        assert_eq!(program_line(["on Pulumi.yaml line :"]), None);
    }

    /// As the real CLI (v3.274.1) printed them.
    #[test]
    fn the_real_clis_messages_are_told_apart() {
        let locked = "error: the stack is currently locked by 1 lock(s). Either wait for the other process(es) to end or delete the lock file with `pulumi cancel`.\n  file:///w/.pulumi/locks/organization/iam/dev/a.json: created by ann@h (pid 1) at 2026-11-23T10:00:00Z\n";
        assert_eq!(classify(locked), [Message::StackLocked, Message::LockFile]);
        assert_eq!(classify("error: no stack named 'dev' found\n"), [Message::NoStack]);
        // The Kubernetes provider's Helm release, deleted outside Pulumi (a walk's destroy).
        assert_eq!(
            classify("error: uninstall: Release not loaded: logstore: release: not found\n"),
            [Message::ReleaseGone]
        );
        // v3.274.1, `stack select --create` of a stack another job created meanwhile (S3).
        assert_eq!(
            classify("error: stack 'organization/secrets/ci' already exists\n"),
            [Message::StackExists]
        );
        // The same race on S3: the lock was gone by the time `pulumi` read it.
        assert_eq!(
            classify(
                "error: could not create stack: blob (key \".pulumi/locks/organization/secrets/ci/795996e9.json\") \
                 (code=NotFound): operation error S3: GetObject, https response error StatusCode: 404\n"
            ),
            [Message::LockFile]
        );
        assert_eq!(
            classify("error: no changes were expected for preview but changes were proposed\n"),
            [Message::NoChangesExpected]
        );
        assert_eq!(
            classify("error: getting stack configuration: get stack secrets manager: incorrect passphrase\n"),
            [Message::IncorrectPassphrase]
        );
        assert_eq!(
            classify("error: failed to load checkpoint: unexpected end of JSON input\n"),
            [Message::UnreadableLock]
        );
        assert!(classify("error: something else\n").is_empty());
    }

    /// As pulumi v3.274.1 with the Kubernetes provider printed it, after `kubectl label
    /// --overwrite` of a label the program sets.
    #[test]
    fn a_field_conflict_names_the_other_manager_and_the_field() {
        let stderr = "  * the Kubernetes API server reported that \"nginx-ingress\" failed to fully initialize or become live: Server-Side Apply field conflict detected. See https://www.pulumi.com/registry/packages/kubernetes/how-to-guides/managing-resources-with-server-side-apply/#handle-field-conflicts-on-existing-resources for troubleshooting help.\n  The resource managed by field manager \"pulumi-kubernetes-cfbf6aec\" had an apply conflict: Apply failed with 1 conflict: conflict with \"kubectl-label\" using v1: .metadata.labels.mara/cluster\n";
        assert_eq!(classify(stderr), [Message::FieldConflict]);
        assert_eq!(
            field_conflicts(stderr),
            [FieldConflict {
                manager: "kubectl-label".into(),
                field: ".metadata.labels.mara/cluster".into()
            }]
        );
        let two = "Apply failed with 2 conflicts: conflict with \"kubectl-edit\" using apps/v1: .spec.replicas, conflict with \"kubectl-edit\" using apps/v1: .spec.template.spec.containers[name=\"app\"].image";
        assert_eq!(
            field_conflicts(two)
                .iter()
                .map(|c| c.field.as_str())
                .collect::<Vec<_>>(),
            [".spec.replicas", ".spec.template.spec.containers[name=\"app\"].image"]
        );
        assert!(field_conflicts("conflict with \"x").is_empty());
    }
}
