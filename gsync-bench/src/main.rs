//! `gsync-bench`: see the library's documentation and `gsync-bench --help`.

fn main() -> std::process::ExitCode {
    gsync_bench::cli::main()
}
