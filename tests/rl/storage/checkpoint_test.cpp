// Checkpoint: bit-identical round trips of every kind, atomic commits (a failed or killed commit
// leaves the previous checkpoint), and one clear CheckpointError, with nothing on stderr, for every
// kind of damage.
#include "storage/checkpoint.hpp"

#include <H5Cpp.h>
#include <gtest/gtest.h>
#include <hdf5.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bit>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "storage/run_log.hpp"
#include "test_support.hpp"

namespace fiber::rl {
namespace {

using test::kPython;
using test::quoted;
using test::run_command;
using test::StderrCapture;
using test::TempDir;

double from_bits(std::uint64_t b) { return std::bit_cast<double>(b); }
std::uint64_t bits(double x) { return std::bit_cast<std::uint64_t>(x); }

std::vector<double> random_bit_doubles(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  std::vector<double> out(n);
  for (double& x : out) x = from_bits(random());  // NaNs with payloads, infinities, subnormals
  return out;
}

Bytes random_bytes(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  Bytes out(n);
  for (std::byte& b : out) b = static_cast<std::byte>(random() & 0xff);
  return out;
}

void expect_same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(double)), 0);
}

bool one_line_naming(const std::string& message, const std::filesystem::path& path) {
  return message.find('\n') == std::string::npos &&
         message.find(path.string()) != std::string::npos;
}

// The message of the CheckpointError thrown by `action`, and nothing written to stderr meanwhile.
std::string checkpoint_error(const std::function<void()>& action) {
  StderrCapture capture;
  std::string message = "(no exception)";
  try {
    action();
  } catch (const CheckpointError& error) {
    message = error.what();
  } catch (const std::exception& error) {
    message = std::string("(other exception) ") + error.what();
  }
  EXPECT_EQ(capture.text(), "") << "stderr was not empty; the error was: " << message;
  return message;
}

std::string reading_error(const std::filesystem::path& path) {
  return checkpoint_error([&] { CheckpointReader reader(path); });
}

// A checkpoint with one entry of every kind, some of them awkward.
struct Sample {
  // large: theta of 300'000 values (~2.3 MiB: three chunks), 3 MiB of text, 5 MiB of bytes.
  explicit Sample(bool large = true)
      : theta(random_bit_doubles(large ? 300'000 : 20'000, 1)),
        big_text(large ? 3 << 20 : 3000, 'c'),
        big_bytes(random_bytes(large ? (5 << 20) + 7 : 5007, 3)) {}

  std::vector<double> theta;
  std::vector<double> small = {0.0,
                               -0.0,
                               1.0 / 3.0,
                               std::numeric_limits<double>::infinity(),
                               from_bits(0x7ff0000000000123ull),  // signalling NaN, payload
                               std::numeric_limits<double>::denorm_min()};
  std::vector<std::int64_t> int64s = {std::numeric_limits<std::int64_t>::min(), -1, 0,
                                      std::numeric_limits<std::int64_t>::max()};
  std::vector<std::uint64_t> uint64s = {0, 1, std::numeric_limits<std::uint64_t>::max()};
  std::string text = std::string("line 1\nline 2 \xe2\x9c\x93\0after NUL\0\0", 28);
  std::string big_text;
  Bytes rng = random_bytes(5000, 2);
  Bytes big_bytes;

  void put(CheckpointWriter& w) const {
    w.put("theta", theta);
    w.put("small", small);
    w.put("empty", std::vector<double>{});
    w.put("int64s", int64s);
    w.put("uint64s", uint64s);
    w.put("empty_int64s", std::vector<std::int64_t>{});
    w.put("generation", std::int64_t{-42});
    w.put("int", 7);  // int -> int64
    w.put("seed", std::uint64_t{1} << 63);
    w.put("unsigned", 9u);                             // unsigned -> uint64
    w.put("sigma", from_bits(0xfff8000000000abcull));  // a NaN with a payload
    w.put("text", text);
    w.put("big_text", big_text);
    w.put("empty_text", std::string());
    w.put("literal", "hello");
    w.put("rng", rng);
    w.put("big_bytes", big_bytes);
    w.put("empty_bytes", Bytes{});
    const std::uint32_t raw[2] = {0xdeadbeef, 0x01020304};
    w.put_bytes("raw", raw, sizeof raw);
  }

  void check(const CheckpointReader& r) const {
    expect_same_bits(r.vector("theta"), theta);
    expect_same_bits(r.vector("small"), small);
    EXPECT_TRUE(r.vector("empty").empty());
    EXPECT_EQ(r.int64_vector("int64s"), int64s);
    EXPECT_EQ(r.uint64_vector("uint64s"), uint64s);
    EXPECT_TRUE(r.int64_vector("empty_int64s").empty());
    EXPECT_EQ(r.int64("generation"), -42);
    EXPECT_EQ(r.int64("int"), 7);
    EXPECT_EQ(r.uint64("seed"), std::uint64_t{1} << 63);
    EXPECT_EQ(r.uint64("unsigned"), 9u);
    EXPECT_EQ(r.kind("int"), CheckpointKind::int64);
    EXPECT_EQ(r.kind("unsigned"), CheckpointKind::uint64);
    EXPECT_EQ(bits(r.float64("sigma")), 0xfff8000000000abcull);
    EXPECT_EQ(r.string("text"), text);
    EXPECT_EQ(r.string("text").size(), 28u);
    EXPECT_EQ(r.string("big_text"), big_text);
    EXPECT_EQ(r.string("empty_text"), "");
    EXPECT_EQ(r.string("literal"), "hello");
    EXPECT_EQ(r.bytes("rng"), rng);
    EXPECT_EQ(r.bytes("big_bytes"), big_bytes);
    EXPECT_TRUE(r.bytes("empty_bytes").empty());
    ASSERT_EQ(r.bytes("raw").size(), 8u);
    std::uint32_t raw[2] = {};
    std::memcpy(raw, r.bytes("raw").data(), sizeof raw);
    EXPECT_EQ(raw[0], 0xdeadbeefu);
    EXPECT_EQ(raw[1], 0x01020304u);
    EXPECT_EQ(r.names().size(), 19u);
  }
};

TEST(Checkpoint, RoundTripIsBitIdenticalForEveryKind) {
  TempDir dir;
  const auto path = dir / "checkpoint.h5";
  const Sample sample;
  CheckpointWriter writer;
  sample.put(writer);
  EXPECT_EQ(writer.size(), 19u);
  writer.commit(path);
  EXPECT_FALSE(std::filesystem::exists(dir / "checkpoint.h5.tmp"));
  const CheckpointReader reader(path);
  EXPECT_EQ(reader.path(), path);
  sample.check(reader);
  EXPECT_TRUE(reader.has("theta"));
  EXPECT_FALSE(reader.has("nope"));
  EXPECT_EQ(reader.kind("theta"), CheckpointKind::float64_vector);
  EXPECT_EQ(reader.kind("rng"), CheckpointKind::bytes);
  EXPECT_EQ(to_string(reader.kind("int64s")), "int64[]");
}

TEST(Checkpoint, CommitReplacesAndWriterKeepsEntries) {
  TempDir dir;
  const auto path = dir / "checkpoint.h5";
  CheckpointWriter writer;
  writer.put("generation", 1);
  writer.put("theta", std::vector<double>{1.0});
  writer.commit(path);
  writer.put("generation", 2);  // replaces
  writer.erase("theta");
  EXPECT_FALSE(writer.has("theta"));
  writer.commit(path);
  const CheckpointReader reader(path);
  EXPECT_EQ(reader.int64("generation"), 2);
  EXPECT_FALSE(reader.has("theta"));
  EXPECT_EQ(reader.names(), std::vector<std::string>{"generation"});
}

TEST(Checkpoint, InvalidNamesAreRejected) {
  CheckpointWriter writer;
  EXPECT_THROW(writer.put("", 1.0), std::invalid_argument);
  EXPECT_THROW(writer.put("a/b", 1.0), std::invalid_argument);
  EXPECT_THROW(writer.put(".", 1.0), std::invalid_argument);
  EXPECT_THROW(writer.put(std::string_view("a\0b", 3), 1.0), std::invalid_argument);
  writer.put("a.b-c_d", 1.0);
  EXPECT_EQ(writer.size(), 1u);
}

TEST(Checkpoint, MissingOrMistypedEntriesThrowCheckpointError) {
  TempDir dir;
  const auto path = dir / "checkpoint.h5";
  CheckpointWriter writer;
  writer.put("generation", std::int64_t{-3});
  writer.put("theta", std::vector<double>{1.0, 2.0});
  writer.commit(path);
  const CheckpointReader reader(path);
  std::string message = checkpoint_error([&] { reader.vector("missing"); });
  EXPECT_TRUE(one_line_naming(message, path)) << message;
  EXPECT_NE(message.find("no entry 'missing'"), std::string::npos) << message;
  message = checkpoint_error([&] { reader.vector("generation"); });
  EXPECT_NE(message.find("entry 'generation' is int64, not float64[]"), std::string::npos)
      << message;
  EXPECT_TRUE(one_line_naming(checkpoint_error([&] { reader.uint64("generation"); }), path));
  EXPECT_TRUE(one_line_naming(checkpoint_error([&] { reader.int64("theta"); }), path));
  EXPECT_TRUE(one_line_naming(checkpoint_error([&] { reader.kind("missing"); }), path));
}

// ---- atomicity ----------------------------------------------------------------------------------

void write_generation(const std::filesystem::path& path, std::int64_t generation,
                      std::size_t size) {
  CheckpointWriter writer;
  writer.put("generation", generation);
  writer.put("theta", std::vector<double>(size, static_cast<double>(generation)));
  writer.commit(path);
}

void expect_generation(const std::filesystem::path& path, std::int64_t generation,
                       std::size_t size) {
  const CheckpointReader reader(path);
  EXPECT_EQ(reader.int64("generation"), generation);
  EXPECT_EQ(reader.vector("theta"), std::vector<double>(size, static_cast<double>(generation)));
}

TEST(Checkpoint, FailedCommitLeavesThePreviousCheckpoint) {
  TempDir dir;
  const auto path = dir / "checkpoint.h5";
  write_generation(path, 1, 1000);
  // The temporary file cannot be created: its name is taken by a directory.
  std::filesystem::create_directory(dir / "checkpoint.h5.tmp");
  const std::string message = checkpoint_error([&] { write_generation(path, 2, 1000); });
  EXPECT_TRUE(one_line_naming(message, path)) << message;
  EXPECT_NE(message.find("cannot write"), std::string::npos) << message;
  expect_generation(path, 1, 1000);
  EXPECT_TRUE(std::filesystem::is_directory(dir / "checkpoint.h5.tmp"));  // not ours: kept
  std::filesystem::remove(dir / "checkpoint.h5.tmp");
  write_generation(path, 3, 1000);
  expect_generation(path, 3, 1000);
}

TEST(Checkpoint, CommitIntoAMissingDirectoryFailsClearly) {
  TempDir dir;
  const auto path = dir / "no" / "such" / "checkpoint.h5";
  const std::string message = checkpoint_error([&] { write_generation(path, 1, 10); });
  EXPECT_TRUE(one_line_naming(message, path)) << message;
  EXPECT_NE(message.find("No such file or directory"), std::string::npos) << message;
}

TEST(Checkpoint, UnwritableDirectoryLeavesThePreviousCheckpoint) {
  if (::geteuid() == 0) GTEST_SKIP() << "root ignores directory permissions";
  TempDir dir;
  const auto path = dir / "checkpoint.h5";
  write_generation(path, 1, 1000);
  ::chmod(dir.path().c_str(), 0555);
  const std::string message = checkpoint_error([&] { write_generation(path, 2, 1000); });
  ::chmod(dir.path().c_str(), 0755);
  EXPECT_TRUE(one_line_naming(message, path)) << message;
  EXPECT_NE(message.find("Permission denied"), std::string::npos) << message;
  expect_generation(path, 1, 1000);
}

// A crash after writing the temporary file but before the rename: the old checkpoint is what
// readers see, and the next commit overwrites the stale temporary file.
TEST(Checkpoint, StaleTemporaryFileFromACrashIsHarmless) {
  TempDir dir;
  const auto path = dir / "checkpoint.h5";
  write_generation(path, 1, 1000);
  write_generation(dir / "checkpoint.h5.tmp", 2, 1000);  // complete but never renamed
  expect_generation(path, 1, 1000);
  test::write_file(dir / "checkpoint.h5.tmp", std::vector<char>(777, 'z'));  // or half-written
  expect_generation(path, 1, 1000);
  write_generation(path, 3, 1000);
  expect_generation(path, 3, 1000);
  EXPECT_FALSE(std::filesystem::exists(dir / "checkpoint.h5.tmp"));
}

// A commit never replaces what is not a regular file (rename(2) would, silently), and never
// waits in open(2) on a FIFO: not at the path, not as the temporary file beside it.
TEST(Checkpoint, CommitRefusesToReplaceAFifoOrADirectory) {
  TempDir dir;
  const auto fifo = dir / "fifo.h5";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  std::string message = checkpoint_error([&] { write_generation(fifo, 1, 10); });
  EXPECT_TRUE(one_line_naming(message, fifo)) << message;
  EXPECT_NE(message.find("is a FIFO, not a regular file"), std::string::npos) << message;
  EXPECT_TRUE(std::filesystem::is_fifo(fifo));
  EXPECT_FALSE(std::filesystem::exists(dir / "fifo.h5.tmp"));
  const auto folder = dir / "folder.h5";
  std::filesystem::create_directory(folder);
  message = checkpoint_error([&] { write_generation(folder, 1, 10); });
  EXPECT_NE(message.find("is a directory, not a regular file"), std::string::npos) << message;
  EXPECT_TRUE(std::filesystem::is_directory(folder));
}

TEST(Checkpoint, AFifoAsTheTemporaryFileDoesNotBlockACommit) {
  TempDir dir;
  const auto path = dir / "checkpoint.h5";
  ASSERT_EQ(::mkfifo((dir / "checkpoint.h5.tmp").c_str(), 0644), 0);
  write_generation(path, 1, 1000);
  expect_generation(path, 1, 1000);
  EXPECT_FALSE(std::filesystem::exists(dir / "checkpoint.h5.tmp"));
}

// A process killed at random moments while committing checkpoints over and over: the path always
// holds one complete checkpoint (its generation and theta agree).
TEST(Checkpoint, KilledDuringCommitLeavesACompleteCheckpoint) {
  constexpr std::size_t kSize = 1 << 19;  // 4 MiB of theta
  for (int round = 0; round < 4; ++round) {
    TempDir dir;
    const auto path = dir / "checkpoint.h5";
    write_generation(path, 0, kSize);
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      try {
        for (std::int64_t g = 1;; ++g) write_generation(path, g, kSize);
      } catch (...) {
        ::_exit(3);
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(60 + 90 * round));
    ::kill(child, SIGKILL);
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status)) << "the writer failed: exit " << WEXITSTATUS(status);
    StderrCapture capture;
    const CheckpointReader reader(path);
    const std::int64_t g = reader.int64("generation");
    EXPECT_EQ(reader.vector("theta"), std::vector<double>(kSize, static_cast<double>(g)));
    write_generation(path, g + 1, kSize);
    expect_generation(path, g + 1, kSize);
    EXPECT_EQ(capture.text(), "");
  }
}

// ---- damage -------------------------------------------------------------------------------------

// The file offset and stored size of chunk `index` of dataset `name` (C API).
std::pair<std::uint64_t, std::uint64_t> chunk_location(const std::filesystem::path& path,
                                                       const char* name, hsize_t index) {
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t dataset = H5Dopen2(file, name, H5P_DEFAULT);
  const hid_t space = H5Dget_space(dataset);
  hsize_t offset[1] = {0};
  unsigned filter_mask = 0;
  haddr_t address = 0;
  hsize_t size = 0;
  const herr_t status =
      H5Dget_chunk_info(dataset, space, index, offset, &filter_mask, &address, &size);
  if (status < 0) H5Eprint2(H5E_DEFAULT, stdout);
  H5Sclose(space);
  H5Dclose(dataset);
  H5Fclose(file);
  if (status < 0) throw std::runtime_error("H5Dget_chunk_info failed");
  return {address, size};
}

class Damage : public ::testing::Test {
 protected:
  void SetUp() override {
    CheckpointWriter writer;
    sample_.put(writer);
    writer.commit(path_);
    size_ = std::filesystem::file_size(path_);
  }

  // Reading fails with one line naming the path and containing `problem`.
  void expect_error(const std::string& problem) {
    const std::string message = reading_error(path_);
    EXPECT_TRUE(one_line_naming(message, path_)) << message;
    EXPECT_NE(message.find(problem), std::string::npos) << message;
    EXPECT_EQ(message.rfind("checkpoint " + path_.string() + ": ", 0), 0u) << message;
  }

  TempDir dir_;
  std::filesystem::path path_ = dir_ / "checkpoint.h5";
  Sample sample_;
  std::uintmax_t size_ = 0;
};

TEST_F(Damage, Intact) {
  StderrCapture capture;
  sample_.check(CheckpointReader(path_));
  EXPECT_EQ(capture.text(), "");
}

TEST_F(Damage, MissingFile) {
  std::filesystem::remove(path_);
  expect_error("cannot open (No such file or directory)");
}

TEST_F(Damage, TruncatedToHalf) {
  std::filesystem::resize_file(path_, size_ / 2);
  expect_error("damaged (truncated");
}

TEST_F(Damage, TruncatedToAFewBytes) {
  std::filesystem::resize_file(path_, 100);
  expect_error("damaged");
}

TEST_F(Damage, ZeroLength) {
  std::filesystem::resize_file(path_, 0);
  expect_error("empty file (0 bytes)");
}

TEST_F(Damage, RandomGarbage) {
  const Bytes garbage = random_bytes(size_, 99);
  test::write_file(
      path_, std::vector<char>(reinterpret_cast<const char*>(garbage.data()),
                               reinterpret_cast<const char*>(garbage.data()) + garbage.size()));
  expect_error("not an HDF5 file");
}

TEST_F(Damage, OverwrittenSignature) {
  test::overwrite_bytes(path_, 0, 64, 0xAB);
  expect_error("not an HDF5 file");
}

TEST_F(Damage, OverwrittenSuperblockAfterTheSignature) {
  test::overwrite_bytes(path_, 8, 40, 0xAB);  // versions, sizes, addresses, checksum
  expect_error("damaged");
}

TEST_F(Damage, FlippedByteInASuperblockAddress) {
  test::flip_byte(path_, 30);  // inside an address field: caught by the superblock's checksum
  expect_error("damaged");
}

TEST_F(Damage, FlippedByteInTheRawDataOfTheta) {
  const auto [address, size] = chunk_location(path_, "theta", 1);
  ASSERT_GT(size, 1000u);
  test::flip_byte(path_, address + size / 2);
  expect_error("damaged (checksum mismatch in /theta)");
}

TEST_F(Damage, ZeroedBytesInTheRawDataOfTheScalarGeneration) {
  const auto [address, size] = chunk_location(path_, "generation", 0);
  EXPECT_EQ(size, 12u);  // 8 bytes and the 4-byte Fletcher32 checksum
  test::overwrite_bytes(path_, address, 4, 0x00);
  expect_error("damaged (checksum mismatch in /generation)");
}

TEST_F(Damage, FlippedByteInTheStoredChecksum) {
  const auto [address, size] = chunk_location(path_, "rng", 0);
  test::flip_byte(path_, address + size - 1);
  expect_error("damaged (checksum mismatch in /rng)");
}

TEST_F(Damage, CorruptedMiddleOfTheFile) {
  // The middle of the file lies in big_bytes' or big_text's raw data (most of the file).
  test::overwrite_bytes(path_, size_ / 2, 16, 0x5A);
  expect_error("damaged (checksum mismatch in /");
}

TEST_F(Damage, ForeignHdf5File) {
  {
    H5::H5File file(path_.string(), H5F_ACC_TRUNC);
    const hsize_t dims[1] = {3};
    H5::DataSpace space(1, dims);
    H5::DataSet dataset = file.createDataSet("theta", H5::PredType::NATIVE_DOUBLE, space);
    const double data[3] = {1, 2, 3};
    dataset.write(data, H5::PredType::NATIVE_DOUBLE);
  }
  expect_error("not a fiber checkpoint (an HDF5 file without the 'format' marker)");
}

TEST_F(Damage, ARunLogIsNotACheckpoint) {
  RunLog::create(path_, {{"generation", RunLog::Type::int64}}, RunLog::IfExists::overwrite);
  expect_error("not a fiber checkpoint (its format is 'fiber-runlog', not 'fiber-checkpoint')");
}

TEST_F(Damage, NewerVersion) {
  {
    const hid_t file = H5Fopen(path_.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    const hid_t attribute = H5Aopen(file, "version", H5P_DEFAULT);
    const long long two = 2;
    H5Awrite(attribute, H5T_NATIVE_LLONG, &two);
    H5Aclose(attribute);
    H5Fclose(file);
  }
  expect_error("unsupported checkpoint version 2 (this program reads version 1)");
}

TEST_F(Damage, ADirectoryInsteadOfAFile) {
  std::filesystem::remove(path_);
  std::filesystem::create_directory(path_);
  expect_error("cannot open (is a directory, not a regular file)");
}

TEST_F(Damage, AFifoInsteadOfAFileIsRefusedWithoutWaitingForAWriter) {
  std::filesystem::remove(path_);
  ASSERT_EQ(::mkfifo(path_.c_str(), 0644), 0);
  expect_error("cannot open (is a FIFO, not a regular file)");
  EXPECT_TRUE(std::filesystem::is_fifo(path_));
}

// ---- interoperability ---------------------------------------------------------------------------

constexpr const char* kH5pyScript = R"(import sys
import h5py
with h5py.File(sys.argv[1], "r") as f:
    print("format", f.attrs["format"].decode(), int(f.attrs["version"]))
    t = f["theta"]
    print("theta", len(t), t.dtype.str, t.fletcher32, t.attrs["fiber_kind"].decode(),
          int(t[:].view("<u8")[12345]))
    print("generation", int(f["generation"][0]), f["generation"].attrs["fiber_kind"].decode())
    print("seed", int(f["seed"][0]))
    print("literal", f["literal"][0].decode())
    print("rng", f["rng"][:].tobytes()[:8].hex(), len(f["rng"]))
    print("empty", len(f["empty"]), len(f["empty_text"]))
)";

TEST(Checkpoint, ReadableByH5pyAndH5dump) {
  TempDir dir;
  const auto path = dir / "checkpoint.h5";
  const Sample sample;
  CheckpointWriter writer;
  sample.put(writer);
  writer.commit(path);

  const auto script = dir / "read_checkpoint.py";
  std::ofstream(script) << kH5pyScript;
  const auto result =
      run_command(std::string(kPython) + " " + quoted(script) + " " + quoted(path) + " 2>&1");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  std::ostringstream rng_hex;
  for (int i = 0; i < 8; ++i) {
    char hex[3];
    std::snprintf(hex, sizeof hex, "%02x", static_cast<unsigned>(sample.rng[i]));
    rng_hex << hex;
  }
  const std::string expected =
      "format fiber-checkpoint 1\n"
      "theta 300000 <f8 True float64[] " +
      std::to_string(bits(sample.theta[12345])) +
      "\n"
      "generation -42 int64\n"
      "seed 9223372036854775808\n"
      "literal hello\n"
      "rng " +
      rng_hex.str() +
      " 5000\n"
      "empty 0 0\n";
  EXPECT_EQ(result.output, expected);

  const auto dump = run_command("h5dump -p -H " + quoted(path) + " 2>&1");
  EXPECT_EQ(dump.exit_code, 0) << dump.output;
  EXPECT_NE(dump.output.find("CHECKSUM FLETCHER32"), std::string::npos) << dump.output;
  const auto format = run_command("h5dump -a /format " + quoted(path) + " 2>&1");
  EXPECT_EQ(format.exit_code, 0) << format.output;
  EXPECT_NE(format.output.find("\"fiber-checkpoint\""), std::string::npos) << format.output;
  // A whole dump (data too) of a smaller checkpoint with the same entries.
  const auto small = dir / "small.h5";
  CheckpointWriter small_writer;
  Sample(false).put(small_writer);
  small_writer.commit(small);
  const auto full = run_command("h5dump " + quoted(small) + " > /dev/null 2>&1");
  EXPECT_EQ(full.exit_code, 0);
}

}  // namespace
}  // namespace fiber::rl
