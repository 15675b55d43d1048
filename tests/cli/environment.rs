//! The environment file's `PULUMI_STACK` rules (MARA's, minus its bug) and its errors.

use crate::support::Ws;

const FILE: &str = "config/pulumi/environment";

fn read(ws: &Ws) -> Option<String> {
    std::fs::read_to_string(ws.path().join(FILE)).ok()
}

#[test]
fn the_file_is_created_with_the_stack() {
    let ws = Ws::configured("aws");
    ws.exec(&["up", "-p", "aws", "-s", "Dev", "--target", "iam"], &[])
        .expect(0);
    assert_eq!(read(&ws).as_deref(), Some("PULUMI_STACK=dev\n"));
}

#[test]
fn the_stack_is_appended_on_its_own_line_even_without_a_final_newline() {
    let ws = Ws::configured("aws");
    ws.write(FILE, "# settings\nAWS_PROFILE=admin");
    ws.exec(&["up", "-p", "aws", "-s", "dev", "--target", "iam"], &[])
        .expect(0);
    assert_eq!(
        read(&ws).as_deref(),
        Some("# settings\nAWS_PROFILE=admin\nPULUMI_STACK=dev\n")
    );
    // Next time the file names the stack: -s may be left out.
    ws.exec(&["up", "-p", "aws", "--target", "iam"], &[]).expect(0);
    assert_eq!(
        read(&ws).as_deref(),
        Some("# settings\nAWS_PROFILE=admin\nPULUMI_STACK=dev\n")
    );
}

#[test]
fn a_different_stack_is_refused_naming_both() {
    let ws = Ws::configured("aws");
    ws.write(FILE, "PULUMI_STACK=prod\n");
    ws.exec(&["up", "-p", "aws", "-s", "dev"], &[])
        .expect(2)
        .stderr_has("the stack `dev` differs from PULUMI_STACK=`prod` in config/pulumi/environment")
        .stderr_has("use -s prod");
    assert_eq!(read(&ws).as_deref(), Some("PULUMI_STACK=prod\n"));

    let ws = Ws::configured("aws");
    ws.exec(&["destroy", "-p", "aws", "-s", "dev"], &[("PULUMI_STACK", "qa")])
        .expect(2)
        .stderr_has("differs from PULUMI_STACK=`qa` in the process environment");
    assert_eq!(read(&ws), None, "nothing written on refusal");
}

#[test]
fn a_malformed_file_names_its_line_and_stays_untouched() {
    let ws = Ws::configured("aws");
    ws.write(FILE, "A=1\nthis is not a setting\n");
    ws.exec(&["up", "-p", "aws", "-s", "dev"], &[])
        .expect(3)
        .stderr_has("config/pulumi/environment:2:1: `this is not a setting` is not a KEY=VALUE line");
    assert_eq!(read(&ws).as_deref(), Some("A=1\nthis is not a setting\n"));
}

#[test]
fn show_plan_and_list_providers_never_write_it() {
    let ws = Ws::reference();
    ws.run(&["show-plan", "-p", "aws", "-s", "dev"]).expect(0);
    ws.run(&["list-providers", "-s", "dev"]).expect(0);
    assert_eq!(read(&ws), None);
}
