//! `#[requires("dot", "kube")]` above a `#[test]`: when one of the tools (named as
//! `test_tools::NAMES` names them) is missing as the test is built, the test is ignored with
//! the reason, which says what installs it — cargo's `#[cargo_test(requires = …)]`. A run lists
//! it as `ignored, <reason>` rather than `ok` for a test that proved nothing. Under
//! `RUNNER_REQUIRE_TOOLS=1` (CI) nothing is ignored: the test runs and fails on the missing tool.
//!
//! A tool installed after the build leaves the test ignored until the tests are built again;
//! `cargo test -- --include-ignored` runs it at once (its run-time check then finds the tool).

use proc_macro::{Delimiter, Group, Ident, Literal, Punct, Spacing, Span, TokenStream, TokenTree};

#[proc_macro_attribute]
pub fn requires(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut names = Vec::new();
    for token in attr {
        match token {
            TokenTree::Literal(l) => {
                let text = l.to_string();
                match text.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
                    Some(name) if test_tools::NAMES.contains(&name) => names.push(name.to_string()),
                    _ => {
                        return error(
                            l.span(),
                            &format!(
                                "#[requires] takes tool names, one of {:?}; not {text}",
                                test_tools::NAMES
                            ),
                        );
                    }
                }
            }
            TokenTree::Punct(p) if p.as_char() == ',' => {}
            other => {
                return error(
                    other.span(),
                    "#[requires] takes tool names in quotes, separated by commas",
                );
            }
        }
    }
    if names.is_empty() {
        return error(Span::call_site(), "#[requires] names at least one tool");
    }
    let mut out = TokenStream::new();
    // Read here, so the compiler tracks the variable: the tests are built again when it changes.
    out.extend("const _: Option<&str> = option_env!(\"RUNNER_REQUIRE_TOOLS\");".parse::<TokenStream>());
    if !test_tools::required()
        && let Some(why) = names.iter().find_map(|n| test_tools::find(n).err())
    {
        let reason = format!("{why} (when this test was built; `cargo test -- --include-ignored` runs it anyway)");
        out.extend(attribute("ignore", Some(Literal::string(&reason))));
    }
    out.extend(item);
    out
}

/// `#[name = value]`, or `#[name]`.
fn attribute(name: &str, value: Option<Literal>) -> TokenStream {
    let mut inner = vec![TokenTree::Ident(Ident::new(name, Span::call_site()))];
    if let Some(value) = value {
        inner.push(TokenTree::Punct(Punct::new('=', Spacing::Alone)));
        inner.push(TokenTree::Literal(value));
    }
    [
        TokenTree::Punct(Punct::new('#', Spacing::Alone)),
        TokenTree::Group(Group::new(Delimiter::Bracket, inner.into_iter().collect())),
    ]
    .into_iter()
    .collect()
}

/// `compile_error!(message)` at `span`.
fn error(span: Span, message: &str) -> TokenStream {
    let mut call: TokenStream = format!("compile_error!({message:?});").parse().expect("a call parses");
    call = call
        .into_iter()
        .map(|mut t| {
            t.set_span(span);
            t
        })
        .collect();
    call
}
