// Entry point of the `fftconv` command (cli/app.cpp holds the command itself).
#include "cli/app.hpp"

int main(int argc, char** argv) { return fftconv::cli::run_cli(argc, argv); }
