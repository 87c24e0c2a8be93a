//! The `rshperf` binary: hands the command line to the library and exits with its status.

fn main() {
    let args: Vec<String> = std::env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    std::process::exit(rshperf::run(args));
}
