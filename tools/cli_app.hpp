#pragma once
// CLI::App by name only. The tools' headers take a CLI::App& and include this; only the .cpp
// files that build or read flags include <CLI/CLI.hpp>, whose header-only implementation
// costs every translation unit that includes it about 10-30 s of compile time.
namespace CLI {
class App;
}  // namespace CLI
