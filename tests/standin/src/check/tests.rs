//! The checker's problems on small programs against a one-package schema.

use super::*;

/// A schema of one package, `p` (`@p/sdk@1.0.0`), laid out as `sdk-schema.js` writes it.
fn schema() -> Schema {
    let text = [
        r#"{"schemaVersion":1,"pins":{"p":"1.0.0"},"packages":{"#,
        r#""p":{"source":"@p/sdk@1.0.0","version":"1.0.0","resources":{"#,
        r#""p:index:Thing":{"inputs":{"size":{"type":"number","required":true},"mode":{"type":{"enum":["A","B"]},"required":false},"nested":{"type":{"ref":"p:types/input#Nested"},"required":false},"tags":{"type":{"map":"string"},"required":false}},"outputs":{"arn":"string","size":"number","nested":{"ref":"p:types/output#Nested"}}}},"functions":{"#,
        r#""p:index:getThing":{"inputs":{"name":{"type":"string","required":true}},"outputs":{"arn":"string","names":{"array":"string"}}}},"types":{"#,
        r#""p:types/input#Nested":{"properties":{"on":{"type":"boolean","required":true}}},"#,
        r#""p:types/output#Nested":{"properties":{"on":{"type":"boolean","required":true}}}}"#,
        "}}",
    ]
    .join("\n");
    Schema::new(text)
}

fn problems(program: &str) -> Vec<(usize, String, String)> {
    let s = schema();
    program_problems(program, &s)
}

fn program_problems(text: &str, s: &Schema) -> Vec<(usize, String, String)> {
    program(text, Some(s))
        .into_iter()
        .map(|p| (p.line, p.summary, p.against.to_string()))
        .collect()
}

const HEAD: &str = "name: t\nruntime: yaml\n";

#[test]
fn a_program_that_fits_its_types_has_no_problem() {
    let text = format!(
        "{HEAD}config:\n  n:\n    type: integer\n    default: 3\nvariables:\n  got:\n    fn::invoke:\n      function: p:index:getThing\n      arguments:\n        name: x\n      return: arn\nresources:\n  a:\n    type: p:index:Thing\n    properties:\n      size: ${{n}}\n      mode: A\n      nested:\n        on: true\n      tags:\n        k: ${{got}}\n  b:\n    type: p:index:Thing\n    properties:\n      size: ${{a.nested.on}}\noutputs:\n  arn: ${{a.arn}}\n  first: ${{b.nested[\"on\"]}}\n"
    );
    let got = problems(&text);
    // `a.nested.on` is a boolean: not a number.
    assert_eq!(got.len(), 2, "{got:#?}");
    assert_eq!(got[0].0, 27);
    assert_eq!(got[0].1, "p:index:Thing is not assignable from {size: boolean}");
    assert_eq!(
        got[1].1, "Cannot index into 'b.nested' (type Nested)",
        "an object is not a map"
    );
}

#[test]
fn what_the_engine_refuses_with_its_words_and_what_it_was_checked_against() {
    let cases: [(&str, usize, &str, &str); 8] = [
        (
            "resources:\n  a:\n    type: p:index:Thang\n",
            5,
            "error resolving type of resource a: unable to find resource type \"p:index:Thang\" in resource provider \"p\"",
            "the resource types of @p/sdk@1.0.0",
        ),
        (
            "resources:\n  a:\n    type: p:index:Thing\n    properties:\n      size: 1\n      colour: red\n",
            8,
            "Property colour does not exist on 'p:index:Thing'",
            "p:index:Thing in @p/sdk@1.0.0",
        ),
        (
            "resources:\n  a:\n    type: p:index:Thing\n    properties:\n      size: \"1\"\n",
            7,
            "p:index:Thing is not assignable from {size: string}",
            "p:index:Thing in @p/sdk@1.0.0",
        ),
        (
            "variables:\n  v:\n    fn::invoke:\n      function: p:index:getThings\n",
            6,
            "unable to find function \"p:index:getThings\" in resource provider \"p\"",
            "the functions of @p/sdk@1.0.0",
        ),
        (
            "variables:\n  v:\n    fn::invoke:\n      function: p:index:getThing\n      return: arns\n",
            7,
            "arns does not exist on p:index:getThing",
            "p:index:getThing in @p/sdk@1.0.0",
        ),
        (
            "outputs:\n  o: ${nothing.x}\n",
            4,
            "resource, variable, or config value \"nothing\" not found",
            "the names this program declares",
        ),
        (
            "resources:\n  a:\n    type: p:index:Thing\n    properties:\n      size: 1\n    options:\n      protekt: true\n",
            9,
            "protekt does not exist on resource options",
            "the Pulumi YAML resource options (pulumi-yaml ast/template.go ResourceOptionsDecl)",
        ),
        (
            "config:\n  n:\n    type: number\n",
            4,
            "could not validate 'Pulumi.yaml': 1 error occurred:\n\t* #/config/n/type: value must be one of \"string\", \"integer\", \"boolean\", \"array\", \"object\"\n",
            "the Pulumi project schema",
        ),
    ];
    for (body, line, summary, against) in cases {
        let got = problems(&format!("{HEAD}{body}"));
        assert_eq!(got, vec![(line, summary.to_string(), against.to_string())], "{body}");
    }
}

#[test]
fn invoke_options_and_unknown_arguments_are_warnings_as_in_the_engine() {
    let text = format!(
        "{HEAD}variables:\n  v:\n    fn::invoke:\n      function: p:index:getThing\n      arguments:\n        name: x\n        nmae: y\n      options:\n        versoin: 1.0.0\n  w:\n    fn::unknown: 1\n"
    );
    let got = program(&text, Some(&schema()));
    let summaries: Vec<(Severity, &str)> = got.iter().map(|p| (p.severity, p.summary.as_str())).collect();
    assert_eq!(
        summaries,
        vec![
            (Severity::Warning, "nmae does not exist on Invoke p:index:getThing"),
            (
                Severity::Warning,
                "Field 'versoin' does not exist on Object 'invokeOptions'"
            ),
            (Severity::Warning, "'fn::' is a reserved prefix"),
        ]
    );
    assert_eq!(
        got[1].detail,
        "Existing fields are: 'version', 'parent', 'provider', 'dependsOn', 'pluginDownloadURL'"
    );
    assert_eq!(got[1].fix.as_deref(), Some("did you mean `version`?"));
}

#[test]
fn the_engines_detail_and_a_fix() {
    let text = format!("{HEAD}resources:\n  a:\n    type: p:index:Thing\n    properties:\n      mode: C\n");
    let got = program(&text, Some(&schema()));
    assert_eq!(got.len(), 1, "one diagnostic, every reason in its detail: {got:#?}");
    assert_eq!(got[0].line, 7, "at the block the input is missing from");
    assert_eq!(
        got[0].detail,
        "Cannot assign '{mode: string}' to 'p:index:Thing':\n  size: Missing required property 'size'\n  mode: Allowed values are \"A\", \"B\""
    );
    let text = format!("{HEAD}resources:\n  a:\n    type: p:index:Thing\n    properties:\n      mode: A\n");
    let got = program(&text, Some(&schema()));
    assert_eq!(got[0].fix.as_deref(), Some("add `size: …`"));
    let text = format!("{HEAD}resources:\n  a:\n    type: p:index:Thing\n    propreties:\n      size: 1\n");
    let got = program(&text, Some(&schema()));
    let key = got.iter().find(|p| p.line == 6).expect("the key's problem");
    assert_eq!(key.summary, "Resource p:index:Thing has invalid key 'propreties'");
    assert_eq!(key.detail, "Did you mean 'properties' under 'a'?");
    assert_eq!(key.fix.as_deref(), Some("did you mean `properties`?"));
}

#[test]
fn a_package_the_schema_does_not_describe_is_not_checked() {
    let text = format!(
        "{HEAD}resources:\n  a:\n    type: q:index:Any\n    properties:\n      whatever: 1\noutputs:\n  o: ${{a.anything}}\n"
    );
    assert!(problems(&text).is_empty());
    assert!(program_problems(&text, &Schema::new(String::new())).is_empty());
}

#[test]
fn text_that_is_not_yaml_is_placed_at_the_line_the_parser_stopped() {
    let text = format!("{HEAD}resources:\n  a:\n    type: \"p:index:Th\u{1b}ing\"\n");
    let got = program(&text, Some(&schema()));
    assert_eq!(got.len(), 1, "{got:#?}");
    assert_eq!(got[0].line, HEAD.lines().count() + 3, "{got:#?}");
    assert!(got[0].summary.starts_with("not valid YAML: "), "{}", got[0].summary);
}
