//! What a value of each prompt type must be: the words for a stack file's value and for a typed
//! answer, and the check of the types whose text has a shape (a URL, an address range, a
//! duration). A new type's words and check go here; the compiler names the rest.

use crate::provider::PromptType;

impl PromptType {
    /// What a value of the stack file must be, as said when it is not.
    pub(crate) fn file_shape(self) -> &'static str {
        match self {
            PromptType::Int => "a whole number",
            PromptType::Bool => "true or false",
            PromptType::List => "a list",
            PromptType::String => "a text value",
            PromptType::Path => "a file path",
            PromptType::Context => "a context name",
            PromptType::Url => URL,
            PromptType::Cidr => CIDR,
            PromptType::Duration => DURATION,
        }
    }

    /// What an answer must be, as said when it is missing.
    pub(crate) fn answer_shape(self) -> &'static str {
        match self {
            PromptType::String => "a value",
            PromptType::Url => URL,
            PromptType::Cidr => CIDR,
            PromptType::Duration => DURATION,
            PromptType::Int => "a whole number",
            PromptType::Bool => "yes or no",
            PromptType::List => "values separated by commas",
            PromptType::Path => "a file path",
            PromptType::Context => "a context of the kubeconfig",
        }
    }

    /// Why `text` is not a value of this type, for the types whose text has a shape; `None`
    /// for the others.
    pub(crate) fn text_problem(self, text: &str) -> Option<String> {
        match self {
            PromptType::Url => url_problem(text),
            PromptType::Cidr => cidr_problem(text),
            PromptType::Duration => duration_problem(text),
            PromptType::String
            | PromptType::Int
            | PromptType::Bool
            | PromptType::List
            | PromptType::Path
            | PromptType::Context => None,
        }
    }
}

/// What a `duration` value should be, as said when it is not.
const DURATION: &str = "a duration such as 7d, 12h or 1h30m";

/// Why `text` is not a duration: numbers each followed by its unit (`s`, `m`, `h`, `d`, `w`),
/// largest first, no spaces: what log stores and Go programs read (`7d`, `168h`, `1h30m`).
fn duration_problem(text: &str) -> Option<String> {
    const UNITS: &str = "wdhms";
    let text = text.trim();
    let mut rest = text;
    let mut last: Option<usize> = None;
    if rest.is_empty() {
        return Some(format!("not {DURATION}"));
    }
    while !rest.is_empty() {
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits == 0 {
            return Some(format!("not {DURATION}: a number and its unit (s, m, h, d or w)"));
        }
        let Some(unit) = rest[digits..].chars().next().and_then(|u| UNITS.find(u)) else {
            return Some(format!(
                "not {DURATION}: `{}` is followed by no unit (s, m, h, d or w)",
                &rest[..digits]
            ));
        };
        if last.is_some_and(|l| unit <= l) {
            return Some(format!(
                "not {DURATION}: its units from the largest to the smallest, each once"
            ));
        }
        last = Some(unit);
        rest = &rest[digits + 1..];
    }
    None
}

/// What a `url` value is said to be when it is not.
const URL: &str = "an http://, https:// or oci:// URL";

/// What a `cidr` value should be, as said when it is not.
pub(crate) const CIDR: &str = "an address range such as 10.0.0.0/16";

/// Why `text` is not an address range (`10.0.0.0/16`, `fd00::/48`): the whole of it, a prefix
/// length the address has room for, and no bits set past the prefix (the network's own
/// address is said).
pub(crate) fn cidr_problem(text: &str) -> Option<String> {
    let Some((address, prefix)) = text.trim().split_once('/') else {
        return Some(format!("not {CIDR}: no `/` and prefix length"));
    };
    let Ok(address) = address.parse::<std::net::IpAddr>() else {
        return Some(format!("not {CIDR}: `{address}` is not a whole IP address"));
    };
    let bits: u32 = if address.is_ipv4() { 32 } else { 128 };
    let Some(prefix) = prefix.parse::<u32>().ok().filter(|p| *p <= bits) else {
        return Some(format!("not {CIDR}: the prefix length `{prefix}` is not 0 to {bits}"));
    };
    let value = match address {
        std::net::IpAddr::V4(a) => u128::from(u32::from(a)),
        std::net::IpAddr::V6(a) => u128::from(a),
    };
    let host = if prefix == bits {
        0
    } else {
        u128::MAX >> (128 - bits + prefix)
    };
    if value & host != 0 {
        let network = value & !host;
        let shown = match address {
            std::net::IpAddr::V4(_) => std::net::Ipv4Addr::from(u32::try_from(network).unwrap_or(0)).to_string(),
            std::net::IpAddr::V6(_) => std::net::Ipv6Addr::from(network).to_string(),
        };
        return Some(format!(
            "not a network's address range: bits are set past /{prefix} (the range is {shown}/{prefix})"
        ));
    }
    None
}

/// Why `text` is no `url` value: another scheme (`file:`, `javascript:`), no host, or a user
/// and password in it. `None` when it is one.
pub(crate) fn url_problem(text: &str) -> Option<String> {
    let Some((scheme, rest)) = text.trim().split_once("://") else {
        return Some(format!("not {URL}"));
    };
    if !matches!(scheme.to_ascii_lowercase().as_str(), "http" | "https" | "oci") {
        return Some(format!("a {scheme}:// URL, not {URL}"));
    }
    if let Some(credential) = crate::charts::fetch::credential_in(text.trim()) {
        return Some(format!(
            "a URL with {credential} in it: it would be written into every export and log"
        ));
    }
    if crate::charts::fetch::UrlParts::of(rest).authority.is_empty() {
        return Some("a URL with no host".into());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_range_is_checked_whole() {
        for good in ["10.0.0.0/16", "0.0.0.0/0", "192.168.1.7/32", "fd00::/48", "::/0"] {
            assert_eq!(cidr_problem(good), None, "{good}");
        }
        for (bad, why) in [
            ("10.0.0/16", "`10.0.0` is not a whole IP address"),
            ("10.0.0.0", "no `/` and prefix length"),
            ("10.0.0.0/33", "the prefix length `33` is not 0 to 32"),
            ("10.0.0.0/x", "the prefix length `x` is not 0 to 32"),
            ("10.0.0.1/16", "bits are set past /16 (the range is 10.0.0.0/16)"),
            ("fd00::1/48", "the range is fd00::/48"),
        ] {
            let said = cidr_problem(bad).unwrap_or_default();
            assert!(said.contains(why), "{bad}: {said}");
        }
    }

    #[test]
    fn a_duration_is_numbers_each_with_its_unit() {
        for good in ["7d", "168h", "1h30m", "2w", "90s", "1d12h"] {
            assert_eq!(duration_problem(good), None, "{good}");
        }
        for (bad, why) in [
            ("sevendays", "a number and its unit"),
            ("7", "`7` is followed by no unit"),
            ("7 days", "`7` is followed by no unit"),
            ("30m1h", "from the largest to the smallest"),
            ("", "not a duration"),
        ] {
            let said = duration_problem(bad).unwrap_or_default();
            assert!(said.contains(why), "{bad}: {said}");
        }
    }
}
