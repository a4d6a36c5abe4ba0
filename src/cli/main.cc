#include "cli/commands.h"

int main(int argc, char** argv) { return telic::cli::RunCli(argc, argv); }
