// safetensors checkpoints: round trips, PyTorch-written files, and clear errors for bad files.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>

#include "bad_inputs.hpp"
#include "engine/base/errors.hpp"
#include "engine/inside/model_weights.hpp"
#include "engine/model/checkpoint.hpp"
#include "engine/model/init.hpp"
#include "test_support.hpp"

namespace gpulab {
namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const CheckpointError& e) {
    return e.what();
  }
  return "";
}

TEST(Checkpoint, RoundTripKeepsEveryBitAndTheConfig) {
  test::TempDir dir;
  const ModelConfig config = preset("lenet5");
  const ModelPlan plan = plan_model(config);
  std::vector<float> params(plan.parameter_count), back(plan.parameter_count);
  init_parameters(params, plan, 3);
  save_checkpoint(dir.path() / "w.safetensors", plan, config, params);
  const Checkpoint c = load_checkpoint(dir.path() / "w.safetensors");
  EXPECT_EQ(c.tensors.at("conv1.weight").shape, (std::vector<int64_t>{6, 1, 5, 5}));
  EXPECT_EQ(c.metadata.at("format"), "pt");
  ASSERT_TRUE(c.model().has_value());
  EXPECT_EQ(c.model()->name, "lenet5");
  apply_checkpoint(c, plan, back, "w");
  EXPECT_EQ(back, params);
  // The header is padded so the data starts 8-byte aligned.
  std::ifstream in(dir.path() / "w.safetensors", std::ios::binary);
  uint64_t header = 0;
  in.read(reinterpret_cast<char*>(&header), 8);
  EXPECT_EQ(header % 8, 0u);
}

// Weights holding NaN or an infinite value (a diverged run's) are refused where a checkpoint is
// taken in, naming the tensor: --init-weights (apply_checkpoint), predict and eval
// (load_model_weights), the window's Inside tab.
TEST(Checkpoint, NanOrInfiniteWeightsAreRefusedNamingTheTensor) {
  test::TempDir dir;
  const ModelConfig config = preset("lenet5");
  const ModelPlan plan = plan_model(config);
  std::vector<float> params(plan.parameter_count), back(plan.parameter_count);
  init_parameters(params, plan, 3);
  size_t fc2_bias = 0;
  for (const auto& p : plan.parameters)
    if (p.name == "fc2.bias") fc2_bias = size_t(p.offset);
  for (const float broken :
       {std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::infinity()}) {
    std::vector<float> diverged = params;
    diverged[fc2_bias + 2] = broken;
    const auto file = dir.path() / "diverged.safetensors";
    save_checkpoint(file, plan, config, diverged);
    const std::string said = std::string("fc2.bias holds ") +
                             (std::isnan(broken) ? "NaN" : "an infinite value") +
                             " (value 3 of 84); these weights are broken: train again, or give "
                             "another checkpoint";
    EXPECT_EQ(error_of([&] { apply_checkpoint(load_checkpoint(file), plan, back, "ck"); }),
              "ck: " + said);
    EXPECT_EQ(error_of([&] { load_model_weights(file, ""); }), file.string() + ": " + said);
  }
}

TEST(Checkpoint, LoadsPyTorchWrittenWeights) {
  // Written by tests/golden/make_golden.py from PyTorch's own state_dict.
  const Checkpoint c = load_checkpoint(test::golden_dir() / "lenet5_init.safetensors");
  const ModelPlan plan = plan_model(preset("lenet5"));
  std::vector<float> params(plan.parameter_count);
  apply_checkpoint(c, plan, params, "golden");
  EXPECT_NE(params[0], 0.0f);
}

TEST(Checkpoint, MismatchListsEveryProblem) {
  test::TempDir dir;
  const ModelConfig lenet = preset("lenet5");
  const ModelPlan plan = plan_model(lenet);
  std::vector<float> params(plan.parameter_count);
  save_checkpoint(dir.path() / "w.safetensors", plan, lenet, params);
  const ModelPlan other = plan_model(preset("pytorch-example"));
  std::vector<float> other_params(other.parameter_count);
  const std::string message = error_of([&] {
    apply_checkpoint(load_checkpoint(dir.path() / "w.safetensors"), other, other_params, "w.safetensors");
  });
  EXPECT_NE(message.find("does not fit the model"), std::string::npos) << message;
  EXPECT_NE(message.find("conv1.weight has shape [6, 1, 5, 5] but the model needs [32, 1, 3, 3]"),
            std::string::npos) << message;
  EXPECT_NE(message.find("unexpected fc3.weight"), std::string::npos) << message;
}

TEST(Checkpoint, BadFilesGiveClearErrors) {
  test::TempDir dir;
  const ModelConfig config = preset("mlp");
  const ModelPlan plan = plan_model(config);
  std::vector<float> params(plan.parameter_count);
  save_checkpoint(dir.path() / "w.safetensors", plan, config, params);
  std::ifstream in(dir.path() / "w.safetensors", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  auto write = [&](const std::string& name, const std::string& content) {
    std::ofstream(dir.path() / name, std::ios::binary) << content;
    return dir.path() / name;
  };
  EXPECT_NE(error_of([&] { load_checkpoint(dir.path() / "missing"); }).find("no such file"), std::string::npos);
  EXPECT_NE(error_of([&] { load_checkpoint(write("short", "abc")); }).find("too short"), std::string::npos);
  EXPECT_NE(error_of([&] { load_checkpoint(write("trunc", bytes.substr(0, bytes.size() - 100))); })
                .find("outside the file"),
            std::string::npos);
  std::string huge = bytes;
  huge[5] = '\x7f';  // header length far beyond the file
  EXPECT_NE(error_of([&] { load_checkpoint(write("huge", huge)); }).find("header length"), std::string::npos);
  std::string garbled = bytes;
  garbled[8] = '#';  // the opening brace of the JSON header
  EXPECT_NE(error_of([&] { load_checkpoint(write("garbled", garbled)); }).find("not valid JSON"),
            std::string::npos);
}

// A file of raw bytes as safetensors: the header text as given (padded to 8 bytes), then `data`
// zero bytes.
std::filesystem::path write_raw_safetensors(const std::filesystem::path& path, std::string header,
                                            size_t data) {
  header.append((8 - header.size() % 8) % 8, ' ');
  const uint64_t length = header.size();
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(&length), 8);
  out << header << std::string(data, '\0');
  return path;
}

// Two tensors of one name (JSON keeps the last: the first was silently lost), and shapes and
// offsets of floats (2.5 read as 2) are refused in one line naming the tensor and the field.
TEST(Checkpoint, DuplicatedNamesAndFloatShapesOrOffsetsAreRefused) {
  test::TempDir dir;
  const std::string tensor = R"({"dtype": "F32", "shape": [2], "data_offsets": [0, 8]})";
  const std::string twice = error_of([&] {
    load_checkpoint(
        write_raw_safetensors(dir.path() / "twice.safetensors",
                              R"({"fc1.bias": )" + tensor + R"(, "fc1.bias": )" + tensor + "}", 8));
  });
  EXPECT_NE(twice.find("names the tensor fc1.bias twice"), std::string::npos) << twice;
  for (const auto& [entry, field] :
       {std::pair{R"({"dtype": "F32", "shape": [2.0], "data_offsets": [0, 8]})", "shape"},
        std::pair{R"({"dtype": "F32", "shape": [2.5], "data_offsets": [0, 8]})", "shape"},
        std::pair{R"({"dtype": "F32", "shape": [2], "data_offsets": [0.0, 8.0]})",
                  "data_offsets"}}) {
    const std::string problem = error_of([&] {
      load_checkpoint(write_raw_safetensors(dir.path() / "float.safetensors",
                                            std::string(R"({"fc1.bias": )") + entry + "}", 8));
    });
    EXPECT_NE(problem.find("tensor fc1.bias has \"" + std::string(field) + "\""), std::string::npos)
        << entry << ": " << problem;
    EXPECT_NE(problem.find("not a list of whole numbers"), std::string::npos) << problem;
    EXPECT_EQ(problem.find('\n'), std::string::npos) << problem;
  }
  // The same tensor once, in whole numbers, loads.
  EXPECT_EQ(load_checkpoint(write_raw_safetensors(dir.path() / "once.safetensors",
                                                  R"({"fc1.bias": )" + tensor + "}", 8))
                .tensors.size(),
            1u);
}

// A header is bounded as it is read: 300,000 tensors (the window stopped for minutes) and a
// nesting a million deep are refused in one line, and a mismatch names a dozen problems, then
// counts.
TEST(Checkpoint, AHeaderOfTooManyTensorsOrNestedTooDeepIsRefusedAsItIsRead) {
  test::TempDir dir;
  nlohmann::json many = nlohmann::json::object();
  for (int i = 0; i < 300000; ++i)
    many["t" + std::to_string(i)] = {
        {"dtype", "F32"}, {"shape", {1}}, {"data_offsets", {4 * i, 4 * i + 4}}};
  const std::string too_many = error_of([&] {
    load_checkpoint(write_raw_safetensors(dir.path() / "many.safetensors", many.dump(), 1200000));
  });
  EXPECT_NE(too_many.find("names more than 10000 tensors"), std::string::npos) << too_many;
  const std::string deep = error_of([&] {
    load_checkpoint(write_raw_safetensors(
        dir.path() / "deep.safetensors", std::string(1000000, '[') + std::string(1000000, ']'), 0));
  });
  EXPECT_NE(deep.find("nested more than 8 levels deep"), std::string::npos) << deep.substr(0, 300);
  for (const std::string& problem : {too_many, deep})
    EXPECT_EQ(problem.find('\n'), std::string::npos) << problem.substr(0, 300);

  nlohmann::json extra = nlohmann::json::object();
  for (int i = 0; i < 40; ++i)
    extra["t" + std::to_string(i)] = {
        {"dtype", "F32"}, {"shape", {1}}, {"data_offsets", {4 * i, 4 * i + 4}}};
  const Checkpoint checkpoint =
      load_checkpoint(write_raw_safetensors(dir.path() / "extra.safetensors", extra.dump(), 160));
  const ModelConfig config = preset("mlp");
  const std::string mismatch =
      error_of([&] { check_checkpoint_fits(checkpoint, plan_model(config), "extra.safetensors"); });
  // mlp's 4 tensors missing and 40 unexpected: 12 named, 32 counted.
  EXPECT_NE(mismatch.find("; and 32 more"), std::string::npos) << mismatch;
  EXPECT_LT(mismatch.size(), 1000u) << mismatch;
}

// Only a checkpoint gpulab wrote is its own to replace: PyTorch's, or any other file, is not.
TEST(Checkpoint, OnlyACheckpointGpulabWroteIsItsKind) {
  test::TempDir dir;
  const ModelConfig config = preset("mlp");
  const ModelPlan plan = plan_model(config);
  save_checkpoint(dir.path() / "w.safetensors", plan, config,
                  std::vector<float>(size_t(plan.parameter_count)));
  EXPECT_TRUE(checkpoint_kind().is_own(dir.path() / "w.safetensors"));
  // A safetensors file without gpulab's model config: another program's.
  test::write_safetensors(dir.path() / "other.safetensors", {{"fc1.bias", {2}}}, nullptr);
  EXPECT_FALSE(checkpoint_kind().is_own(dir.path() / "other.safetensors"));
  std::ofstream(dir.path() / "notes.md") << "# Lab\n";
  EXPECT_FALSE(checkpoint_kind().is_own(dir.path() / "notes.md"));
  EXPECT_EQ(describe_file(dir.path() / "notes.md"), "a Markdown file");
  EXPECT_EQ(describe_file(dir.path() / "w.safetensors"), "a safetensors checkpoint");
}

// Saving never replaces what is not a regular file (as root, rename() would put a regular file in
// place of a device node), follows a symbolic link to its target, and leaves no temporary file
// behind when it fails.
TEST(Checkpoint, SavingReplacesOnlyRegularFiles) {
  test::TempDir dir;
  const ModelConfig config = preset("mlp");
  const ModelPlan plan = plan_model(config);
  std::vector<float> params(plan.parameter_count, 0.5f);
  const auto fifo = dir.path() / "fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  std::filesystem::create_directory(dir.path() / "folder");
  for (const auto& target : {fifo, dir.path() / "folder"}) {
    const std::string message = error_of([&] { save_checkpoint(target, plan, config, params); });
    EXPECT_NE(message.find("not a regular file"), std::string::npos) << message;
  }
  EXPECT_TRUE(std::filesystem::is_fifo(fifo));
  EXPECT_TRUE(std::filesystem::is_directory(dir.path() / "folder"));
  if (geteuid() == 0) {  // a device node, as only root can make one: /dev/null's numbers
    const auto device = dir.path() / "null";
    ASSERT_EQ(mknod(device.c_str(), S_IFCHR | 0666, makedev(1, 3)), 0);
    EXPECT_THROW(save_checkpoint(device, plan, config, params), CheckpointError);
    EXPECT_TRUE(std::filesystem::is_character_file(device));
  }
  save_checkpoint(dir.path() / "w.safetensors", plan, config, params);
  std::filesystem::create_symlink("w.safetensors", dir.path() / "link");
  save_checkpoint(dir.path() / "link", plan, config, params);
  EXPECT_TRUE(std::filesystem::is_symlink(dir.path() / "link"));
  for (const auto& entry : std::filesystem::directory_iterator(dir.path()))
    EXPECT_NE(entry.path().extension(), ".tmp") << entry.path();
}

// The other direction: PyTorch loads a gpulab checkpoint into its own module. Needs python3 with
// torch (Debian's python3-torch); skipped without it.
TEST(Checkpoint, PyTorchLoadsGpulabWeights) {
  if (std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "python3 with torch is not installed (apt-get install python3-torch)";
  test::TempDir dir;
  const ModelConfig config = preset("pytorch-example");
  const ModelPlan plan = plan_model(config);
  std::vector<float> params(plan.parameter_count);
  init_parameters(params, plan, 4);
  const auto path = dir.path() / "w.safetensors";
  save_checkpoint(path, plan, config, params);
  const std::string script =
      "import json,struct,sys,torch\n"
      "from torch import nn\n"
      "b=open(sys.argv[1],'rb').read(); n=struct.unpack('<Q',b[:8])[0]; h=json.loads(b[8:8+n])\n"
      "sd={k:torch.frombuffer(bytearray(b[8+n+v['data_offsets'][0]:8+n+v['data_offsets'][1]]),dtype=torch.float32).reshape(v['shape']) for k,v in h.items() if k!='__metadata__'}\n"
      "class Net(nn.Module):\n"
      "  def __init__(s):\n"
      "    super().__init__(); s.conv1=nn.Conv2d(1,32,3); s.conv2=nn.Conv2d(32,64,3); s.dropout1=nn.Dropout(0.25); s.dropout2=nn.Dropout(0.5); s.fc1=nn.Linear(9216,128); s.fc2=nn.Linear(128,10)\n"
      "net=Net(); net.load_state_dict(sd, strict=True)\n"
      "print(float(net.conv1.weight[0,0,0,0]))\n";
  std::ofstream(dir.path() / "load.py") << script;
  const std::string command = "/usr/bin/python3 " + (dir.path() / "load.py").string() + " " +
                              path.string() + " > " + (dir.path() / "out.txt").string() + " 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0);
  std::ifstream out(dir.path() / "out.txt");
  float first = 0;
  out >> first;
  EXPECT_FLOAT_EQ(first, params[0]);
}

// Every way a checkpoint's tensors can disagree with the config it declares is refused in one
// message naming the file, before the parameters are allocated: a 300-byte file declaring a layer
// of 2,000,000 features took 6.2 GB for 31 s before it said "missing fc1.weight".
TEST(Checkpoint, EveryDeclaredShapeMismatchIsRefusedBeforeAllocating) {
  test::TempDir dir;
  const uint64_t peak_before = test::peak_memory_bytes();
  int tried = 0;
  for (const char* name : {"mlp", "lenet5"}) {
    for (const test::BadCheckpoint& bad :
         test::shape_mismatch_checkpoints(dir.path() / name, preset(name))) {
      if (bad.loads) continue;  // a consistent file of another input: test_inside's consumers
      ++tried;
      std::string message;
      const auto start = std::chrono::steady_clock::now();
      try {
        model_weights(load_checkpoint(bad.path), "", bad.path.string());
        ADD_FAILURE() << bad.what << ": loaded";
      } catch (const CheckpointError& e) {
        message = e.what();
      }
      EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5)) << bad.what;
      EXPECT_EQ(message.rfind(bad.path.string() + " does not fit the model:", 0), 0u)
          << bad.what << "\n"
          << message;
      if (bad.what.find("300-byte") != std::string::npos) {
        EXPECT_LT(std::filesystem::file_size(bad.path), 400u);
        EXPECT_NE(message.find("missing fc1.weight [2000000, 784]"), std::string::npos) << message;
      }
    }
  }
  EXPECT_EQ(tried, 2 * 2 + 6 * (4 + 10));  // per tensor six ways, and two for the whole file
  EXPECT_LT(test::peak_memory_bytes(), peak_before + (uint64_t(512) << 20));
}

// What is not a regular file is refused at once, in one line saying what it is; a file whose
// header declares less data than it holds (or is no header at all) is refused from its size,
// without its data being read: /dev/zero and a sparse 3 GiB file were read whole.
TEST(Checkpoint, FifosDevicesAndFilesLargerThanTheirHeaderAreRefusedUnread) {
  test::TempDir dir;
  const auto fifo = test::make_fifo(dir.path() / "fifo.safetensors");
  std::string message;
  EXPECT_TRUE(
      test::ends_in_time(fifo, [&] { message = error_of([&] { load_checkpoint(fifo); }); }));
  EXPECT_EQ(message, fifo.string() +
                         ": is a FIFO, where a checkpoint is a regular file; give the "
                         "path of the file itself");
  std::filesystem::create_directory(dir.path() / "folder");
  std::filesystem::create_symlink("/dev/zero", dir.path() / "zero.safetensors");
  for (const auto& [path, kind] : {std::pair{std::filesystem::path("/dev/zero"), "a device"},
                                   std::pair{dir.path() / "zero.safetensors", "a device"},
                                   std::pair{dir.path() / "folder", "a folder"}}) {
    const uint64_t read_before = test::bytes_read_so_far();
    message = error_of([&] { load_checkpoint(path); });
    EXPECT_EQ(message,
              path.string() + ": is " + kind +
                  ", where a checkpoint is a regular file; give the path of the file itself");
    EXPECT_LT(test::bytes_read_so_far() - read_before, 1u << 20) << path;
  }

  const ModelConfig config = preset("mlp");
  const ModelPlan plan = plan_model(config);
  std::vector<float> params(plan.parameter_count);
  const auto padded = dir.path() / "padded.safetensors";
  save_checkpoint(padded, plan, config, params);
  const auto zeros = dir.path() / "zeros.safetensors";
  std::ofstream(zeros).close();
  for (const auto& path : {padded, zeros}) {
    ASSERT_EQ(::truncate(path.c_str(), off_t(3) << 30), 0);  // sparse: no disk taken
    const uint64_t read_before = test::bytes_read_so_far();
    const auto start = std::chrono::steady_clock::now();
    message = error_of([&] { load_checkpoint(path); });
    EXPECT_LT(test::bytes_read_so_far() - read_before, 1u << 20) << message;
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2)) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
  EXPECT_NE(
      error_of([&] {
        load_checkpoint(padded);
      }).find("declares 814120 bytes of tensor data but the file holds 3.0 GiB after the header"),
      std::string::npos);
  EXPECT_NE(error_of([&] { load_checkpoint(zeros); }).find("header is not valid JSON"),
            std::string::npos);
}

}  // namespace
}  // namespace gpulab
