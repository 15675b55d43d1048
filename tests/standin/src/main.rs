//! The `pulumi` stand-in (see the library, and README.md beside this crate).

fn main() {
    pulumi_standin::pulumi_main();
}
