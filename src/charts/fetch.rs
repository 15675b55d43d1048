//! What the mirror reads over the network: a repository's index, a package, a schema's
//! document. A URL's user and password (`https://user:pass@host/…`, how a proxy such as
//! Artifactory is often given) are sent as HTTP basic authentication and never shown: every
//! URL the runner prints or writes goes through [`Url::shown`]. Proxies come from the usual
//! variables (`HTTPS_PROXY`, `NO_PROXY`); certificates from the system's store.

use std::io::Read as _;
use std::time::Duration;

use base64::Engine as _;

/// The largest document read (kube-apiserver's `/openapi/v2` is about 4 MB, a chart index of
/// a big repository tens of MB).
const LARGEST: u64 = 128 << 20;

/// A URL, its credentials kept apart from how it is shown.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Url {
    /// Without credentials.
    bare: String,
    /// Its query with its `?`, or nothing: kept on the URLs joined to it on the same host
    /// (a token a repository wants), shown with its secret values hidden.
    query: String,
    /// `user:password`, when the URL carried them.
    credentials: Option<String>,
}

impl std::fmt::Debug for Url {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.shown())
    }
}

impl std::fmt::Display for Url {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.shown())
    }
}

/// Why a URL cannot be read from.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub(crate) enum BadUrl {
    #[error("{0} is not an http:// or https:// URL")]
    Scheme(String),
    #[error("{0} names no host")]
    NoHost(String),
}

impl Url {
    /// `text` as an http(s) URL; its credentials, if any, set apart.
    pub(crate) fn parse(text: &str) -> Result<Self, BadUrl> {
        let text = text.trim();
        let Some((scheme, rest)) = text.split_once("://") else {
            return Err(BadUrl::Scheme(hide_credentials(text)));
        };
        if !matches!(scheme.to_ascii_lowercase().as_str(), "http" | "https") {
            return Err(BadUrl::Scheme(hide_credentials(text)));
        }
        let UrlParts {
            authority, path, query, ..
        } = UrlParts::of(rest);
        let (credentials, host) = match authority.rsplit_once('@') {
            Some((c, h)) => (Some(c.to_string()), h),
            None => (None, authority),
        };
        if host.is_empty() {
            return Err(BadUrl::NoHost(hide_credentials(text)));
        }
        Ok(Url {
            bare: format!("{scheme}://{host}{path}"),
            query: query.to_string(),
            credentials,
        })
    }

    /// What is asked for: the URL with its query, without its credentials (sent apart).
    fn target(&self) -> String {
        format!("{}{}", self.bare, self.query)
    }

    /// The URL as the runner prints and writes it: never with a password.
    pub(crate) fn shown(&self) -> String {
        match &self.credentials {
            Some(c) => {
                let user = c.split_once(':').map_or(c.as_str(), |(u, _)| u);
                let (scheme, rest) = self.bare.split_once("://").expect("parsed");
                format!("{scheme}://{user}:***@{rest}{}", hidden_query(&self.query))
            }
            None => format!("{}{}", self.bare, hidden_query(&self.query)),
        }
    }

    /// A URL relative to this one as a directory (a repository: `index.yaml`, a package's
    /// relative `urls` entry), with the same credentials when on the same host; an absolute
    /// one as it is.
    pub(crate) fn join(&self, relative: &str) -> Result<Url, BadUrl> {
        if relative.contains("://") {
            let mut url = Url::parse(relative)?;
            if url.credentials.is_none() && url.host() == self.host() {
                url.credentials.clone_from(&self.credentials);
            }
            if url.query.is_empty() && url.host() == self.host() {
                url.query.clone_from(&self.query);
            }
            return Ok(url);
        }
        let folder = self.bare.trim_end_matches('/');
        let joined = if let Some(absolute) = relative.strip_prefix('/') {
            let (scheme, rest) = folder.split_once("://").expect("parsed");
            let host = rest.split('/').next().unwrap_or(rest);
            format!("{scheme}://{host}/{absolute}")
        } else {
            format!("{folder}/{}", relative.trim_start_matches("./"))
        };
        Ok(Url {
            bare: joined,
            query: self.query.clone(),
            credentials: self.credentials.clone(),
        })
    }

    fn host(&self) -> &str {
        let rest = self.bare.split_once("://").map_or("", |(_, r)| r);
        rest.split('/').next().unwrap_or(rest)
    }
}

/// The credential a URL-like text carries, as a message says it: "a user and password"
/// (`scheme://user:pass@host/…`), or "the query parameter `token`" for a parameter named as
/// services name a secret (`token`, `password`, `secret`, `…key`, `sig`, `signature`, an S3
/// presigned URL's `X-Amz-Credential`). `None` when it carries none.
pub(crate) fn credential_in(text: &str) -> Option<String> {
    let (_, rest) = text.split_once("://")?;
    let parts = UrlParts::of(rest);
    if parts.authority.contains('@') {
        return Some("a user and password".into());
    }
    query_params(parts.query)
        .find(|(name, _)| secret_parameter(name))
        .map(|(name, _)| format!("the query parameter `{name}`"))
}

/// Whether a URL-like text carries a credential ([`credential_in`]).
pub(crate) fn has_credentials(text: &str) -> bool {
    credential_in(text).is_some()
}

/// A URL-like text with its credentials hidden: `user:pass@` as `user:***@`, and the value of
/// each secret query parameter as `***`, for a message about a text that may not even be a URL.
pub(crate) fn hide_credentials(text: &str) -> String {
    let Some((scheme, rest)) = text.split_once("://") else {
        return text.to_string();
    };
    let UrlParts {
        authority,
        path,
        query,
        fragment,
    } = UrlParts::of(rest);
    let authority = match authority.rsplit_once('@') {
        Some((credentials, host)) => {
            let user = credentials.split_once(':').map_or(credentials, |(u, _)| u);
            format!("{user}:***@{host}")
        }
        None => authority.to_string(),
    };
    format!("{scheme}://{authority}{path}{}{fragment}", hidden_query(query))
}

/// A URL's query (`?a=1&token=x`, or nothing) with each secret parameter's value as `***`.
fn hidden_query(query: &str) -> String {
    let Some(pairs) = query.strip_prefix('?') else {
        return query.to_string();
    };
    let hidden: Vec<String> = pairs
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((name, _)) if secret_parameter(name) => format!("{name}=***"),
            _ => pair.to_string(),
        })
        .collect();
    format!("?{}", hidden.join("&"))
}

/// A URL after its `scheme://`, in its parts, each possibly empty.
pub(crate) struct UrlParts<'a> {
    /// `user:pass@host:port`.
    pub(crate) authority: &'a str,
    path: &'a str,
    /// With its `?`.
    query: &'a str,
    /// With its `#`.
    fragment: &'a str,
}

impl<'a> UrlParts<'a> {
    pub(crate) fn of(rest: &'a str) -> Self {
        let (authority, rest) = rest.split_at(rest.find(['/', '?', '#']).unwrap_or(rest.len()));
        let (rest, fragment) = rest.split_at(rest.find('#').unwrap_or(rest.len()));
        let (path, query) = rest.split_at(rest.find('?').unwrap_or(rest.len()));
        UrlParts {
            authority,
            path,
            query,
            fragment,
        }
    }
}

/// A query's (`?a=1&b=2`) `name=value` pairs.
fn query_params(query: &str) -> impl Iterator<Item = (&str, &str)> {
    let pairs = query.strip_prefix('?').unwrap_or_default();
    pairs.split('&').filter_map(|pair| pair.split_once('='))
}

/// A query parameter's name as services name a secret.
fn secret_parameter(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    ["token", "pass", "pwd", "secret", "signature", "credential"]
        .iter()
        .any(|s| name.contains(s))
        || name.ends_with("key")
        || matches!(name.as_str(), "sig" | "auth" | "authorization")
}

/// Why a read failed, in words that name the URL (shown without its password).
#[derive(Debug, thiserror::Error)]
pub(crate) enum FetchError {
    #[error("{url} answered HTTP {status}")]
    Status { url: String, status: u16 },
    #[error("cannot read {url}: {why}")]
    Transport { url: String, why: String },
    #[error("{url} is larger than {} MB", LARGEST >> 20)]
    TooLarge { url: String },
}

/// Reads over the network, one agent for the whole mirror (its connections reused).
pub(crate) struct Fetcher {
    agent: ureq::Agent,
}

impl Fetcher {
    pub(crate) fn new() -> Self {
        let config = ureq::Agent::config_builder()
            .timeout_connect(Some(Duration::from_secs(20)))
            .timeout_global(Some(Duration::from_secs(300)))
            .http_status_as_error(false)
            .proxy(ureq::Proxy::try_from_env())
            .user_agent(concat!("runner/", env!("CARGO_PKG_VERSION")))
            .build();
        Fetcher {
            agent: ureq::Agent::new_with_config(config),
        }
    }

    /// The body of `url`, whole.
    pub(crate) fn get(&self, url: &Url) -> Result<Vec<u8>, FetchError> {
        let shown = url.shown();
        let transport = |e: &dyn std::fmt::Display| FetchError::Transport {
            url: shown.clone(),
            // The library's words may quote the URL it was given, credentials and all.
            why: scrub(&e.to_string(), url),
        };
        let mut request = self.agent.get(&url.target());
        if let Some(c) = &url.credentials {
            let encoded = base64::engine::general_purpose::STANDARD.encode(percent_decoded(c));
            request = request.header("Authorization", &format!("Basic {encoded}"));
        }
        let response = request.call().map_err(|e| transport(&e))?;
        let status = response.status().as_u16();
        if !(200..300).contains(&status) {
            return Err(FetchError::Status { url: shown, status });
        }
        let mut body = Vec::new();
        response
            .into_body()
            .into_reader()
            .take(LARGEST + 1)
            .read_to_end(&mut body)
            .map_err(|e| transport(&e))?;
        if body.len() as u64 > LARGEST {
            return Err(FetchError::TooLarge { url: shown });
        }
        Ok(body)
    }
}

/// `text` with the URL's password and secret query values, if any, removed.
fn scrub(text: &str, url: &Url) -> String {
    let text = query_params(&url.query)
        .filter(|(name, value)| secret_parameter(name) && !value.is_empty())
        .fold(text.to_string(), |text, (_, value)| text.replace(value, "***"));
    match &url.credentials {
        Some(c) => {
            let mut out = text.replace(c.as_str(), "***");
            if let Some((_, password)) = c.split_once(':')
                && !password.is_empty()
            {
                out = out.replace(password, "***");
            }
            out
        }
        None => text,
    }
}

/// `user:pa%40ss` as the bytes meant (a URL's userinfo is percent-encoded).
fn percent_decoded(s: &str) -> Vec<u8> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(hex) = s.get(i + 1..i + 3)
            && let Ok(b) = u8::from_str_radix(hex, 16)
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_are_kept_apart_and_never_shown() {
        let url = Url::parse("https://robot:s3cr%40t@artifactory.example/helm/").unwrap();
        assert_eq!(url.shown(), "https://robot:***@artifactory.example/helm/");
        assert_eq!(
            format!("{url} {url:?}"),
            "https://robot:***@artifactory.example/helm/ https://robot:***@artifactory.example/helm/"
        );
        let package = url.join("charts/demo-1.0.0.tgz").unwrap();
        assert_eq!(
            package.shown(),
            "https://robot:***@artifactory.example/helm/charts/demo-1.0.0.tgz"
        );
        assert_eq!(package.credentials.as_deref(), Some("robot:s3cr%40t"));
        assert_eq!(percent_decoded("robot:s3cr%40t"), b"robot:s3cr@t");
        // Another host gets none of them.
        let elsewhere = url.join("https://cdn.example/demo-1.0.0.tgz").unwrap();
        assert!(elsewhere.credentials.is_none());
        assert_eq!(hide_credentials("ftp://u:p@host/x"), "ftp://u:***@host/x");
        // A credential in the query: said and hidden, the other parameters kept.
        let url = "https://harbor.example/chartrepo?project=a&token=QTok-55&X-Amz-Signature=abc#top";
        assert_eq!(credential_in(url).as_deref(), Some("the query parameter `token`"));
        assert_eq!(
            hide_credentials(url),
            "https://harbor.example/chartrepo?project=a&token=***&X-Amz-Signature=***#top"
        );
        assert_eq!(
            credential_in("https://robot:pw@h/x").as_deref(),
            Some("a user and password")
        );
        // An `@` after the host is no user; a harmless parameter is no credential.
        assert_eq!(credential_in("https://h/x?q=a@b&author=me"), None);
        assert_eq!(
            credential_in("https://h?apiKey=1").as_deref(),
            Some("the query parameter `apiKey`")
        );
        assert_eq!(
            Url::parse("ftp://u:p@host/x").unwrap_err().to_string(),
            "ftp://u:***@host/x is not an http:// or https:// URL"
        );
    }

    #[test]
    fn relative_package_urls_resolve_as_helm_resolves_them() {
        let repo = Url::parse("http://127.0.0.1:8879/repo").unwrap();
        assert_eq!(
            repo.join("index.yaml").unwrap().shown(),
            "http://127.0.0.1:8879/repo/index.yaml"
        );
        assert_eq!(
            repo.join("./a-1.tgz").unwrap().shown(),
            "http://127.0.0.1:8879/repo/a-1.tgz"
        );
        assert_eq!(
            repo.join("/other/a-1.tgz").unwrap().shown(),
            "http://127.0.0.1:8879/other/a-1.tgz"
        );
        // A repository's query (a token it wants) goes with each file asked of it, hidden when shown.
        let repo = Url::parse("https://harbor.example/chartrepo/bos?token=T0k#x").unwrap();
        let index = repo.join("index.yaml").unwrap();
        assert_eq!(
            index.target(),
            "https://harbor.example/chartrepo/bos/index.yaml?token=T0k"
        );
        assert_eq!(
            index.shown(),
            "https://harbor.example/chartrepo/bos/index.yaml?token=***"
        );
        assert_eq!(
            scrub("cannot read https://harbor.example/x?token=T0k", &index),
            "cannot read https://harbor.example/x?token=***"
        );
    }
}
