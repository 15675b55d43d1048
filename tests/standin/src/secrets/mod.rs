//! Secrets as the file backend keeps them (`pkg/secrets/passphrase`) and as the engine marks
//! them in values (`sdk/go/common/resource/sig`).

pub(crate) mod crypto;
pub(crate) mod secret;
