//! Secrets the runner makes rather than asks for (`generate` in a provider file's secret):
//! made once, stored encrypted with the others, never printed.

use rsa::pkcs8::{EncodePrivateKey, EncodePublicKey, LineEnding};

/// The bits of a generated RSA key (what `openssl genrsa` and most JWT guides use).
const RSA_BITS: usize = 2048;

/// A new RSA key pair: the private key as PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`) and the
/// public one as `SubjectPublicKeyInfo` PEM (`-----BEGIN PUBLIC KEY-----`), what `openssl genpkey`
/// and `openssl pkey -pubout` write and what JWT libraries read.
pub(crate) fn rsa_key_pair() -> Result<(String, String), String> {
    let mut rng = rand_core::OsRng;
    let key = rsa::RsaPrivateKey::new(&mut rng, RSA_BITS).map_err(|e| format!("cannot make an RSA key: {e}"))?;
    let private = key
        .to_pkcs8_pem(LineEnding::LF)
        .map_err(|e| format!("cannot write the RSA key as PEM: {e}"))?;
    let public = key
        .to_public_key()
        .to_public_key_pem(LineEnding::LF)
        .map_err(|e| format!("cannot write the RSA public key as PEM: {e}"))?;
    Ok((private.to_string(), public))
}

#[cfg(test)]
mod tests {
    use rsa::pkcs8::{DecodePrivateKey, DecodePublicKey};

    #[test]
    fn a_key_pair_reads_back_as_a_matching_pair_and_differs_each_time() {
        let (private, public) = super::rsa_key_pair().unwrap();
        assert!(private.starts_with("-----BEGIN PRIVATE KEY-----\n"), "{private}");
        assert!(public.starts_with("-----BEGIN PUBLIC KEY-----\n"), "{public}");
        let key = rsa::RsaPrivateKey::from_pkcs8_pem(&private).unwrap();
        let read = rsa::RsaPublicKey::from_public_key_pem(&public).unwrap();
        assert_eq!(key.to_public_key(), read);
        assert_eq!(rsa::traits::PublicKeyParts::size(&read) * 8, 2048);
        assert_ne!(super::rsa_key_pair().unwrap().0, private);
    }
}
