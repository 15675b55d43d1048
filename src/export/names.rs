//! Names the target engines accept, made from project names (which may hold `_`, `.` and
//! capitals): deterministic, unique within one export, and shortened with a hash of the project
//! name when too long, so the same graph always gives the same names. Every name that differs
//! from its project's is reported, so the caller can print the mapping.

use std::collections::{BTreeMap, BTreeSet};

use sha2::{Digest as _, Sha256};

/// A kind of name, with its rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rule {
    /// A Kubernetes object name (a DNS-1123 label: `a-z`, `0-9`, `-`, alphanumeric at both
    /// ends) of at most this many characters: PKO Stacks 42 (the CRD's rule), Argo tasks 63.
    Dns1123(usize),
    /// A Backstage entity name: `A-Z a-z 0-9` with `-`, `_`, `.` between, at most 63.
    Backstage,
    /// A GitHub Actions job id: a letter or `_`, then letters, digits, `-`, `_`.
    GithubJob,
    /// A GitLab CI job name: anything but a top-level keyword or a hidden (`.`) name.
    GitlabJob,
}

/// Top-level keys of a GitLab CI file, which a job may not be named.
const GITLAB_KEYWORDS: [&str; 11] = [
    "default",
    "include",
    "stages",
    "variables",
    "workflow",
    "image",
    "services",
    "cache",
    "before_script",
    "after_script",
    "types",
];

/// Job names GitLab gives a meaning of their own: a job named `pages` is GitLab's Pages job,
/// which publishes what the job leaves in `public/` as the project's website (and makes GitLab
/// add a `pages:deploy` job). A project of that name gets `pages-project`, as a keyword does.
const GITLAB_SPECIAL_JOBS: [&str; 1] = ["pages"];

impl Rule {
    pub(crate) fn describe(self) -> String {
        match self {
            Rule::Dns1123(max) => format!("a DNS-1123 name of at most {max} characters"),
            Rule::Backstage => "a Backstage entity name of at most 63 characters".into(),
            Rule::GithubJob => "a GitHub Actions job id".into(),
            Rule::GitlabJob => "a GitLab CI job name (not a keyword, nor GitLab's Pages job `pages`)".into(),
        }
    }

    fn max(self) -> usize {
        match self {
            Rule::Dns1123(max) => max,
            Rule::Backstage => 63,
            Rule::GithubJob | Rule::GitlabJob => 255,
        }
    }

    /// The name cleaned of what the rule forbids, not yet shortened.
    fn clean(self, name: &str) -> String {
        match self {
            Rule::Dns1123(_) => {
                let mut out = String::new();
                for c in name.chars() {
                    let c = c.to_ascii_lowercase();
                    let c = if c.is_ascii_lowercase() || c.is_ascii_digit() {
                        c
                    } else {
                        '-'
                    };
                    if !(c == '-' && out.ends_with('-')) {
                        out.push(c);
                    }
                }
                out.trim_matches('-').to_string()
            }
            Rule::Backstage => name
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                        c
                    } else {
                        '-'
                    }
                })
                .collect::<String>()
                .trim_matches(['-', '_', '.'])
                .to_string(),
            Rule::GithubJob => {
                let out: String = name
                    .chars()
                    .map(|c| {
                        if c.is_ascii_alphanumeric() || matches!(c, '-' | '_') {
                            c
                        } else {
                            '_'
                        }
                    })
                    .collect();
                if out.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
                    out
                } else {
                    format!("_{out}")
                }
            }
            Rule::GitlabJob => {
                let bare = name.trim_start_matches('.');
                if GITLAB_KEYWORDS.contains(&bare)
                    || GITLAB_SPECIAL_JOBS.contains(&bare)
                    || bare.len() != name.len()
                    || bare.is_empty()
                {
                    format!("{bare}-project")
                } else {
                    name.to_string()
                }
            }
        }
    }

    /// Does `name` already follow the rule?
    pub(crate) fn accepts(self, name: &str) -> bool {
        !name.is_empty() && name.len() <= self.max() && self.clean(name) == name
    }
}

/// Eight hex digits of the SHA-256 of `text`.
fn hash(text: &str) -> String {
    format!("{:.8x}", Sha256::digest(text.as_bytes()))
}

/// `clean` cut to `max` with `-<hash of original>` at the end.
fn shortened(clean: &str, original: &str, max: usize) -> String {
    let tail = format!("-{}", hash(original));
    let keep = max.saturating_sub(tail.len());
    let head: String = clean.chars().take(keep).collect();
    let head = head.trim_end_matches(['-', '_', '.']);
    if head.is_empty() {
        format!("p{}", &tail[..tail.len().min(max - 1)])
    } else {
        format!("{head}{tail}")
    }
}

/// The names of one kind for a set of projects.
#[derive(Debug, Clone)]
pub(crate) struct Names {
    pub(crate) rule: Rule,
    by_project: BTreeMap<String, String>,
}

impl Names {
    /// Names for `projects` under `rule`, none equal to a name in `reserved`. A project whose
    /// name follows the rule keeps it; others are cleaned, and shortened with a hash when too
    /// long or when the cleaned name is taken.
    pub(crate) fn new<'a>(rule: Rule, projects: impl IntoIterator<Item = &'a str>, reserved: &[&str]) -> Self {
        let projects: BTreeSet<&str> = projects.into_iter().collect();
        let mut taken: BTreeSet<String> = reserved.iter().map(|s| (*s).to_string()).collect();
        let mut by_project = BTreeMap::new();
        // Names kept as they are first, so a cleaned name never takes one of them.
        for p in &projects {
            if rule.accepts(p) && !taken.contains(*p) {
                taken.insert((*p).to_string());
                by_project.insert((*p).to_string(), (*p).to_string());
            }
        }
        for p in &projects {
            if by_project.contains_key(*p) {
                continue;
            }
            let clean = rule.clean(p);
            let name = if !clean.is_empty() && clean.len() <= rule.max() && !taken.contains(&clean) {
                clean
            } else {
                shortened(&clean, p, rule.max())
            };
            taken.insert(name.clone());
            by_project.insert((*p).to_string(), name);
        }
        Names { rule, by_project }
    }

    /// The name of `project` (every project given to [`Names::new`] has one).
    pub(crate) fn get(&self, project: &str) -> &str {
        self.by_project.get(project).map_or("", String::as_str)
    }

    /// (project, name) of every project whose name changed, by project.
    pub(crate) fn changed(&self) -> impl Iterator<Item = (&str, &str)> {
        self.by_project
            .iter()
            .filter(|(p, n)| p != n)
            .map(|(p, n)| (p.as_str(), n.as_str()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_names_stay_others_are_cleaned_and_long_ones_shortened_with_a_hash() {
        let long = "a-very-long-project-name-that-goes-on-and-on-and-on";
        let names = Names::new(Rule::Dns1123(42), ["vpc", "My_App", "my-app", "db.primary", long], &[]);
        assert_eq!(names.get("vpc"), "vpc");
        assert_eq!(names.get("my-app"), "my-app");
        // `my-app` is taken by the project of that name: the cleaned one gets a hash.
        assert!(names.get("My_App").starts_with("my-app-"), "{}", names.get("My_App"));
        assert_eq!(names.get("db.primary"), "db-primary");
        let short = names.get(long);
        assert_eq!(short.len(), 42);
        assert!(Rule::Dns1123(42).accepts(short), "{short}");
        let again = Names::new(Rule::Dns1123(42), [long], &[]);
        assert_eq!(again.get(long), short, "deterministic");
        let changed: Vec<_> = names.changed().map(|(p, _)| p).collect();
        assert_eq!(changed, ["My_App", long, "db.primary"]);
    }

    #[test]
    fn backstage_and_github_rules() {
        let names = Names::new(Rule::Backstage, ["Db.Primary", "_x_", &"n".repeat(70)], &[]);
        assert_eq!(names.get("Db.Primary"), "Db.Primary");
        assert_eq!(names.get("_x_"), "x");
        assert_eq!(names.get(&"n".repeat(70)).len(), 63);
        let jobs = Names::new(Rule::GithubJob, ["a.b", "9lives", "runner"], &["runner"]);
        assert_eq!(jobs.get("a.b"), "a_b");
        assert_eq!(jobs.get("9lives"), "_9lives");
        assert_ne!(jobs.get("runner"), "runner");
        let gitlab = Names::new(Rule::GitlabJob, ["stages", ".hidden", "vpc", "pages"], &[]);
        assert_eq!(gitlab.get("stages"), "stages-project");
        assert_eq!(gitlab.get("pages"), "pages-project");
        assert_eq!(gitlab.get(".hidden"), "hidden-project");
        assert_eq!(gitlab.get("vpc"), "vpc");
    }
}
