// engine/base, the floor of the engine: its typed errors, atomic file writing, the clock helpers,
// numeric bounds and UTF-8 checks every room uses. It includes nothing of gpulab's.
//
// The engine's typed errors. The engine never exits or prints: it throws these, and the CLI or the
// GUI turns them into a message for the learner.
#pragma once

#include <stdexcept>
#include <string>

namespace gpulab {

// A model or training configuration that cannot work (a kernel larger than its input, an
// unknown layer type, a negative learning rate). The message says what and how to fix it.
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// An output path refused before anything is written: it names a file that is not of the kind the
// flag writes (a Markdown file given to --save), a folder, a device, an input of the command or
// a run's record. The command line exits with status 2 for it; nothing was touched.
class OutputRefused : public ConfigError {
 public:
  using ConfigError::ConfigError;
};

// A checkpoint that cannot be read or does not fit the model.
class CheckpointError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A run record that cannot be written or read.
class RecordError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Something the system would not give: a thread (a limit on threads, no memory for its stack).
class ResourceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace gpulab
