//! The passphrase secrets manager of the file backend, as the real CLI does it
//! (`pkg/secrets/passphrase/manager.go`, `sdk/go/common/resource/config/crypt.go`):
//! key = PBKDF2-SHA256(passphrase, 8-byte salt, 1,000,000 rounds, 32 bytes); values are
//! AES-256-GCM with a 12-byte nonce, written `v1:<base64 nonce>:<base64 ciphertext+tag>`;
//! the salt string is `v1:<base64 salt>:<encryption of "pulumi">`, which checks the passphrase.

use aes_gcm::aead::{Aead, KeyInit};
use aes_gcm::{Aes256Gcm, Nonce};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;

use serde_json::{Map, Value};

use crate::fail::{Failure, fail};
use crate::program::is_secret;

/// The real CLI's round count. `PULUMI_STANDIN_KDF_ITERATIONS` (test switch) lowers it so test
/// suites that start hundreds of processes stay fast; files then only open with the same setting.
const ITERATIONS: u32 = 1_000_000;

pub const PASSPHRASE_MISSING: &str =
    "passphrase must be set with PULUMI_CONFIG_PASSPHRASE or PULUMI_CONFIG_PASSPHRASE_FILE environment variables";

pub struct Crypter {
    cipher: Aes256Gcm,
}

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

fn iterations() -> u32 {
    std::env::var("PULUMI_STANDIN_KDF_ITERATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|n| *n > 0)
        .unwrap_or(ITERATIONS)
}

fn random<const N: usize>() -> [u8; N] {
    let mut b = [0u8; N];
    getrandom::fill(&mut b).expect("the system random source works");
    b
}

impl Crypter {
    fn with_salt(passphrase: &str, salt: &[u8]) -> Self {
        let mut key = [0u8; 32];
        pbkdf2::pbkdf2_hmac::<sha2::Sha256>(passphrase.as_bytes(), salt, iterations(), &mut key);
        Crypter {
            cipher: Aes256Gcm::new_from_slice(&key).expect("32-byte key"),
        }
    }

    /// A new salt for a new stack: returns the crypter and the `encryptionsalt` string.
    pub fn new_salt(passphrase: &str) -> (Self, String) {
        let salt: [u8; 8] = random();
        let c = Crypter::with_salt(passphrase, &salt);
        let check = c.encrypt("pulumi");
        (c, format!("v1:{}:{check}", B64.encode(salt)))
    }

    /// Opens an existing `encryptionsalt`, checking the passphrase against it.
    pub fn open(passphrase: &str, salt: &str) -> Result<Self, Failure> {
        let mut parts = salt.splitn(3, ':');
        let (Some("v1"), Some(s), Some(check)) = (parts.next(), parts.next(), parts.next()) else {
            return Err(fail(format!("invalid encryption salt: {salt}")));
        };
        let salt = B64.decode(s).map_err(|_| fail("invalid encryption salt"))?;
        let c = Crypter::with_salt(passphrase, &salt);
        match c.decrypt(check) {
            Ok(v) if v == "pulumi" => Ok(c),
            _ => Err(fail("incorrect passphrase")),
        }
    }

    pub fn encrypt(&self, plaintext: &str) -> String {
        let nonce: [u8; 12] = random();
        let ct = self
            .cipher
            .encrypt(Nonce::from_slice(&nonce), plaintext.as_bytes())
            .expect("AES-GCM encryption does not fail");
        format!("v1:{}:{}", B64.encode(nonce), B64.encode(ct))
    }

    pub fn decrypt(&self, ciphertext: &str) -> Result<String, Failure> {
        let mut parts = ciphertext.splitn(3, ':');
        let (Some("v1"), Some(n), Some(ct)) = (parts.next(), parts.next(), parts.next()) else {
            return Err(fail("failed to decrypt: invalid ciphertext"));
        };
        let nonce = B64
            .decode(n)
            .map_err(|_| fail("failed to decrypt: invalid ciphertext"))?;
        let ct = B64
            .decode(ct)
            .map_err(|_| fail("failed to decrypt: invalid ciphertext"))?;
        if nonce.len() != 12 {
            return Err(fail("failed to decrypt: invalid ciphertext"));
        }
        let pt = self
            .cipher
            .decrypt(Nonce::from_slice(&nonce), ct.as_ref())
            .map_err(|_| fail("failed to decrypt: incorrect passphrase"))?;
        String::from_utf8(pt).map_err(|_| fail("failed to decrypt: not UTF-8"))
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
