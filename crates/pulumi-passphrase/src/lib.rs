//! The passphrase secrets manager of Pulumi's file (and cloud-storage) backends, as the real
//! CLI does it (`pkg/secrets/passphrase/manager.go`, `sdk/go/common/resource/config/crypt.go`):
//! key = PBKDF2-SHA256(passphrase, 8-byte salt, 1,000,000 rounds, 32 bytes); a value is
//! AES-256-GCM with a 12-byte nonce, written `v1:<base64 nonce>:<base64 ciphertext+tag>`; a
//! stack's `encryptionsalt` is `v1:<base64 salt>:<the encryption of "pulumi">`, which is how
//! a passphrase is told right or wrong without any secret.
//!
//! A crate of its own so that the key derivation, a million rounds, is compiled optimised in
//! every profile (the workspace's `Cargo.toml` says so): the runner checks a passphrase before
//! its first project starts, and its test double of `pulumi` keeps secrets the same way. The
//! round count is the caller's to give ([`ROUNDS`] is the real CLI's): the crate reads no
//! environment.

use std::fmt;

use aes_gcm::aead::{Aead, KeyInit};
use aes_gcm::{Aes256Gcm, Nonce};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;

/// The real CLI's round count.
pub const ROUNDS: u32 = 1_000_000;

/// What the value `"pulumi"` encrypts to in an `encryptionsalt`: the passphrase check.
const CHECK: &str = "pulumi";

/// Why a salt or a value could not be opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// The passphrase is not the one the salt (or the value) was made with.
    Incorrect,
    /// Not a `v1:…:…` string of base64 parts; says which part is wrong.
    Malformed(&'static str),
    /// Decrypted, but not UTF-8 text.
    NotText,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Incorrect => f.write_str("incorrect passphrase"),
            Error::Malformed(what) => write!(f, "malformed {what}"),
            Error::NotText => f.write_str("the decrypted value is not UTF-8 text"),
        }
    }
}

impl std::error::Error for Error {}

/// Encrypts and decrypts a stack's secret values with the key of one passphrase and salt.
pub struct Crypter {
    cipher: Aes256Gcm,
}

fn random<const N: usize>() -> [u8; N] {
    let mut b = [0u8; N];
    getrandom::fill(&mut b).expect("the system random source works");
    b
}

/// `v1:<a>:<b>` split into its two base64 parts, decoded.
fn parts(text: &str, what: &'static str) -> Result<(Vec<u8>, Vec<u8>), Error> {
    let mut parts = text.splitn(3, ':');
    let (Some("v1"), Some(a), Some(b)) = (parts.next(), parts.next(), parts.next()) else {
        return Err(Error::Malformed(what));
    };
    let a = B64.decode(a).map_err(|_| Error::Malformed(what))?;
    Ok((a, b.as_bytes().to_vec()))
}

impl Crypter {
    fn with_salt(passphrase: &str, salt: &[u8], rounds: u32) -> Self {
        let mut key = [0u8; 32];
        pbkdf2::pbkdf2_hmac::<sha2::Sha256>(passphrase.as_bytes(), salt, rounds, &mut key);
        Crypter {
            cipher: Aes256Gcm::new_from_slice(&key).expect("a 32-byte key"),
        }
    }

    /// A new salt for a new stack: the crypter and the `encryptionsalt` string.
    #[must_use]
    pub fn new_salt(passphrase: &str, rounds: u32) -> (Self, String) {
        let salt: [u8; 8] = random();
        let c = Crypter::with_salt(passphrase, &salt, rounds);
        let check = c.encrypt(CHECK);
        (c, format!("v1:{}:{check}", B64.encode(salt)))
    }

    /// Opens an existing `encryptionsalt` with `passphrase`, checking it.
    ///
    /// # Errors
    /// [`Error::Incorrect`] for another passphrase (or round count), [`Error::Malformed`] for a
    /// string that is not a salt.
    pub fn open(passphrase: &str, encryptionsalt: &str, rounds: u32) -> Result<Self, Error> {
        let (salt, check) = parts(encryptionsalt, "encryptionsalt")?;
        let check = String::from_utf8(check).map_err(|_| Error::Malformed("encryptionsalt"))?;
        let c = Crypter::with_salt(passphrase, &salt, rounds);
        match c.decrypt(&check) {
            Ok(v) if v == CHECK => Ok(c),
            Err(Error::Malformed(_)) => Err(Error::Malformed("encryptionsalt")),
            _ => Err(Error::Incorrect),
        }
    }

    /// `plaintext` encrypted with a fresh nonce.
    ///
    /// # Panics
    /// Never: AES-GCM encryption of text this size does not fail.
    #[must_use]
    pub fn encrypt(&self, plaintext: &str) -> String {
        let nonce: [u8; 12] = random();
        let ct = self
            .cipher
            .encrypt(Nonce::from_slice(&nonce), plaintext.as_bytes())
            .expect("AES-GCM encryption does not fail");
        format!("v1:{}:{}", B64.encode(nonce), B64.encode(ct))
    }

    /// A value this crypter (or another with the same passphrase and salt) encrypted.
    ///
    /// # Errors
    /// [`Error::Incorrect`] when the key does not open it, [`Error::Malformed`] when it is not a
    /// ciphertext, [`Error::NotText`] when what it holds is not text.
    pub fn decrypt(&self, ciphertext: &str) -> Result<String, Error> {
        let (nonce, ct) = parts(ciphertext, "ciphertext")?;
        let ct = B64.decode(ct).map_err(|_| Error::Malformed("ciphertext"))?;
        if nonce.len() != 12 {
            return Err(Error::Malformed("ciphertext"));
        }
        let pt = self
            .cipher
            .decrypt(Nonce::from_slice(&nonce), ct.as_ref())
            .map_err(|_| Error::Incorrect)?;
        String::from_utf8(pt).map_err(|_| Error::NotText)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_salt_opens_with_its_passphrase_only() {
        let (c, salt) = Crypter::new_salt("right", 10);
        assert!(salt.starts_with("v1:"));
        let value = c.encrypt("s3cret");
        let opened = Crypter::open("right", &salt, 10).expect("its own passphrase opens it");
        assert_eq!(opened.decrypt(&value).unwrap(), "s3cret");
        assert_eq!(Crypter::open("wrong", &salt, 10).err(), Some(Error::Incorrect));
        assert_eq!(Crypter::open("right", &salt, 11).err(), Some(Error::Incorrect));
        assert_eq!(
            Crypter::open("right", "v2:x:y", 10).err(),
            Some(Error::Malformed("encryptionsalt"))
        );
        assert_eq!(
            Crypter::open("right", "v1:!!:y", 10).err(),
            Some(Error::Malformed("encryptionsalt"))
        );
    }

    /// A salt the real CLI (v3.274.1, passphrase `good`) made, and a secret (`x1`) it
    /// encrypted with it: the same rounds, key and layout.
    const REAL_SALT: &str = "v1:xwv7xC+lPdk=:v1:Wq3wj2Xno42Xkax7:eUQNbzX5dB1FncXWkKYi+uvDsSZdgA==";
    const REAL_SECRET: &str = "v1:5twQyI/sayJBrIJ5:X0qrMZaIhI1Yf+Cb4Cyd7+LB";
    const REAL_PLAIN: &str = "x1";

    #[test]
    fn opens_what_the_real_cli_made() {
        let salt = REAL_SALT;
        assert_eq!(Crypter::open("bad", salt, ROUNDS).err(), Some(Error::Incorrect));
        let c = Crypter::open("good", salt, ROUNDS).expect("the real CLI's salt opens");
        assert_eq!(c.decrypt(REAL_SECRET).unwrap(), REAL_PLAIN);
    }
}
