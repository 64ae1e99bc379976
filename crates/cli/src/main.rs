//! The `fsarena` binary: the library's [`fsarena_cli::main_with`] on this process's arguments.

fn main() -> std::process::ExitCode {
    fsarena_cli::main_with(std::env::args_os())
}
