fn main() {
    let cwd = std::env::current_dir().unwrap_or_else(|_| ".".into());
    std::process::exit(runner::app::run(std::env::args_os(), &cwd));
}
