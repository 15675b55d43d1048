//! The passphrase secrets manager of the file backend: the passphrase as the real CLI finds it
//! (`pkg/secrets/passphrase/manager.go`), its messages, and secrets inside state values. The
//! cryptography itself (PBKDF2 key, AES-256-GCM values, the `encryptionsalt` check) is the
//! workspace's `pulumi-passphrase` crate, which the runner's passphrase check uses too.

use serde_json::{Map, Value};

use crate::fail::{Failure, fail};
use crate::secrets::secret::is_secret;

pub const PASSPHRASE_MISSING: &str =
    "passphrase must be set with PULUMI_CONFIG_PASSPHRASE or PULUMI_CONFIG_PASSPHRASE_FILE environment variables";

/// The workspace's one copy of Pulumi's passphrase cryptography, with the CLI's messages.
pub struct Crypter(pulumi_passphrase::Crypter);

/// The passphrase from the environment, as `readPassphrase` finds it: `PULUMI_CONFIG_PASSPHRASE`
/// (even empty), else the trimmed contents of `PULUMI_CONFIG_PASSPHRASE_FILE`.
pub fn passphrase() -> Result<String, Failure> {
    if let Some(p) = std::env::var_os("PULUMI_CONFIG_PASSPHRASE") {
        return Ok(p.to_string_lossy().into_owned());
    }
    match std::env::var("PULUMI_CONFIG_PASSPHRASE_FILE") {
        Ok(path) if !path.is_empty() => match std::fs::read_to_string(&path) {
            Ok(text) => Ok(text.trim().to_string()),
            Err(e) => Err(fail(format!("unable to read PULUMI_CONFIG_PASSPHRASE_FILE: {e}"))),
        },
        _ => Err(fail(PASSPHRASE_MISSING)),
    }
}

impl Crypter {
    /// A new salt for a new stack: returns the crypter and the `encryptionsalt` string.
    pub fn new_salt(passphrase: &str) -> (Self, String) {
        let (c, salt) = pulumi_passphrase::Crypter::new_salt(passphrase, crate::switches::kdf_rounds());
        (Crypter(c), salt)
    }

    /// Opens an existing `encryptionsalt`, checking the passphrase against it.
    pub fn open(passphrase: &str, salt: &str) -> Result<Self, Failure> {
        match pulumi_passphrase::Crypter::open(passphrase, salt, crate::switches::kdf_rounds()) {
            Ok(c) => Ok(Crypter(c)),
            Err(pulumi_passphrase::Error::Incorrect) => Err(fail("incorrect passphrase")),
            Err(_) => Err(fail(format!("invalid encryption salt: {salt}"))),
        }
    }

    pub fn encrypt(&self, plaintext: &str) -> String {
        self.0.encrypt(plaintext)
    }

    pub fn decrypt(&self, ciphertext: &str) -> Result<String, Failure> {
        self.0.decrypt(ciphertext).map_err(|e| match e {
            pulumi_passphrase::Error::Incorrect => fail("failed to decrypt: incorrect passphrase"),
            pulumi_passphrase::Error::Malformed(_) => fail("failed to decrypt: invalid ciphertext"),
            pulumi_passphrase::Error::NotText => fail("failed to decrypt: not UTF-8"),
        })
    }
}

/// A state value with each secret in it, however deep, replaced by what `open` makes of its
/// ciphertext (its plaintext, or `[secret]`), and whether it held any. The real CLI walks
/// outputs the same way (`display.MassageSecrets`; `v.HasSecrets()` for a stack reference's
/// `secretOutputNames`).
pub fn open_secrets(v: &Value, open: &mut dyn FnMut(&str) -> Result<Value, Failure>) -> Result<(Value, bool), Failure> {
    if is_secret(v) {
        let inner = match v.get("ciphertext").and_then(Value::as_str) {
            Some(ct) => open(ct)?,
            None => v["plaintext"].clone(),
        };
        let (opened, _) = open_secrets(&inner, open)?;
        return Ok((opened, true));
    }
    Ok(match v {
        Value::Array(a) => {
            let mut any = false;
            let mut out = Vec::with_capacity(a.len());
            for x in a {
                let (x, secret) = open_secrets(x, open)?;
                any |= secret;
                out.push(x);
            }
            (Value::Array(out), any)
        }
        Value::Object(m) => {
            let mut any = false;
            let mut out = Map::new();
            for (k, x) in m {
                let (x, secret) = open_secrets(x, open)?;
                any |= secret;
                out.insert(k.clone(), x);
            }
            (Value::Object(out), any)
        }
        other => (other.clone(), false),
    })
}

/// A decrypted value: the JSON it was written as, or the text itself.
pub fn plaintext_value(text: String) -> Value {
    serde_json::from_str(&text).unwrap_or(Value::String(text))
}
