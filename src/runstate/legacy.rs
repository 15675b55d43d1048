//! What older runners wrote, read into today's types. Run states of schema version 1, and
//! journal lines of their time, keep a project's inputs as a string: one digest of everything
//! (64 hex digits) or a text manifest, a line per input `<kind> <name as JSON> <16 hex digits>`.
//! The manifest is read here once into the list a runner keeps now, so a runner upgraded between
//! two runs skips what did not change, and says which input did.

use serde::de::IntoDeserializer as _;
use serde::{Deserialize as _, Deserializer};

use crate::exec::{InputDigest, InputKind, Inputs};

/// A project's inputs as any runner wrote them (`deserialize_with` of the field).
pub(crate) fn inputs<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Inputs>, D::Error> {
    Ok(Option::<Inputs>::deserialize(d)?.map(|inputs| match inputs {
        Inputs::Whole(text) => manifest(&text).map_or(Inputs::Whole(text), Inputs::Each),
        each @ Inputs::Each(_) => each,
    }))
}

/// The inputs a text manifest lists; `None` when `text` is none (an older runner's single
/// digest). No line at all is a project with no input.
fn manifest(text: &str) -> Option<Vec<InputDigest>> {
    text.lines()
        .map(|line| {
            let (tag, rest) = line.split_once(' ')?;
            let (name, digest) = rest.rsplit_once(' ')?;
            let kind: Result<InputKind, serde::de::value::Error> = InputKind::deserialize(tag.into_deserializer());
            Some(InputDigest {
                kind: kind.ok()?,
                name: serde_json::from_str(name).ok()?,
                digest: super::digests::is_hex(digest, 16).then(|| digest.to_string())?,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize)]
    struct Field {
        #[serde(default, deserialize_with = "inputs")]
        inputs: Option<Inputs>,
    }

    fn read(json: &str) -> Option<Inputs> {
        serde_json::from_str::<Field>(json).unwrap().inputs
    }

    #[test]
    fn a_text_manifest_is_read_as_the_list_and_a_single_digest_stays_whole() {
        let text = "file \"Pulumi.yaml\" 0123456789abcdef\nconfig \"aws:region\" fedcba9876543210\n\
                    env \"A B\" 0000000000000000\n";
        let list = Inputs::Each(vec![
            InputDigest {
                kind: InputKind::File,
                name: "Pulumi.yaml".into(),
                digest: "0123456789abcdef".into(),
            },
            InputDigest {
                kind: InputKind::Config,
                name: "aws:region".into(),
                digest: "fedcba9876543210".into(),
            },
            InputDigest {
                kind: InputKind::Environment,
                name: "A B".into(),
                digest: "0000000000000000".into(),
            },
        ]);
        let json = serde_json::json!({ "inputs": text }).to_string();
        assert_eq!(read(&json), Some(list.clone()));
        // What this runner writes reads back as it was.
        let json = serde_json::json!({ "inputs": list }).to_string();
        assert_eq!(read(&json), Some(list));
        let whole = "a".repeat(64);
        assert_eq!(
            read(&serde_json::json!({ "inputs": whole }).to_string()),
            Some(Inputs::Whole(whole))
        );
        assert_eq!(read(r#"{"inputs": ""}"#), Some(Inputs::Each(Vec::new())));
        assert_eq!(read("{}"), None);
        for junk in ["file \"x\" zz", "\u{1b}[2J", "disk \"x\" 0123456789abcdef"] {
            let json = serde_json::json!({ "inputs": junk }).to_string();
            assert_eq!(read(&json), Some(Inputs::Whole(junk.into())), "{junk:?}");
        }
    }
}
