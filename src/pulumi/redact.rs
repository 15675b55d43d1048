//! Secret values seen so far (stack outputs marked secret), removed from every printed line.

use std::sync::{Arc, RwLock};

use crate::exec::outputs::REDACTED;

#[derive(Debug, Clone, Default)]
pub(crate) struct Redactor(Arc<RwLock<Vec<String>>>);

impl Redactor {
    pub(crate) fn add(&self, texts: Vec<String>) {
        let mut known = self.0.write().expect("not poisoned");
        for t in texts {
            if !known.contains(&t) {
                known.push(t);
            }
        }
        // Longest first, so a secret containing another is removed whole.
        known.sort_by_key(|s| std::cmp::Reverse(s.len()));
    }

    pub(crate) fn scrub(&self, line: &str) -> String {
        let known = self.0.read().expect("not poisoned");
        let mut out = line.to_string();
        for s in known.iter() {
            if out.contains(s.as_str()) {
                out = out.replace(s.as_str(), REDACTED);
            }
        }
        out
    }
}
