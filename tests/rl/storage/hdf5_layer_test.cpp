// The typed HDF5 layer of fiber_rl_storage (storage/hdf5) on real files: its errors carry HDF5's
// major and minor codes (a missing file, a damaged chunk, a held lock, a truncated file), the
// format marker refuses a foreign HDF5 file, link names with '/' are refused, and a whole file is
// copied with other chunk filters (h5py writes the source and checks the copy).
#include <gtest/gtest.h>
#include <hdf5.h>
#include <sys/file.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "storage/hdf5/dataset.hpp"
#include "storage/hdf5/error.hpp"
#include "storage/hdf5/file.hpp"
#include "storage/hdf5/file_copy.hpp"
#include "storage/hdf5/format_marker.hpp"
#include "storage/hdf5/names.hpp"
#include "test_support.hpp"

namespace fiber::rl {
namespace {

using test::kPython;
using test::quoted;
using test::run_command;
using test::TempDir;

constexpr hdf5::FormatMarker kMarker{"fiber-test", 1, "test file"};
constexpr hsize_t kValues = 4096;
constexpr hsize_t kChunkLength = 1024;

// The hdf5::Error that `action` throws.
template <class Action>
hdf5::Error error_of(Action&& action) {
  try {
    action();
  } catch (const hdf5::Error& error) {
    return error;
  }
  ADD_FAILURE() << "no hdf5::Error thrown";
  return hdf5::Error({}, "(no error)");
}

// A file with one checksummed dataset "values" holding 0, 1, ..., kValues - 1.
void write_values(const std::filesystem::path& path) {
  hdf5::File file = hdf5::File::create(path);
  hdf5::write_format_marker(file, kMarker);
  const hdf5::Dataset dataset =
      hdf5::Dataset::create_checksummed(file, "values", H5T_IEEE_F64LE, kValues, kChunkLength);
  std::vector<double> values(kValues);
  std::iota(values.begin(), values.end(), 0.0);
  dataset.write_all(H5T_NATIVE_DOUBLE, values.data());
}

std::vector<double> read_values(const std::filesystem::path& path) {
  const hdf5::File file = hdf5::File::open(path, hdf5::Access::read_only);
  const hdf5::Dataset dataset = hdf5::Dataset::open(file, "values");
  std::vector<double> values(dataset.length());
  dataset.read_all(H5T_NATIVE_DOUBLE, values.data());
  return values;
}

// The file offset of the first chunk of "values".
std::uint64_t first_chunk_offset(const std::filesystem::path& path) {
  const hdf5::File file = hdf5::File::open(path, hdf5::Access::read_only);
  const hdf5::Dataset dataset = hdf5::Dataset::open(file, "values");
  const hdf5::Dataspace space = dataset.space();
  hsize_t offset[1] = {0};
  unsigned filter_mask = 0;
  haddr_t address = 0;
  hsize_t size = 0;
  hdf5::check(
      H5Dget_chunk_info(dataset.id(), space.id(), 0, offset, &filter_mask, &address, &size));
  return address;
}

TEST(Hdf5Layer, TheErrorOfAFailedCallCarriesTheInnermostCodes) {
  hdf5::silence();
  TempDir dir;
  const auto missing = dir / "missing.h5";
  const hdf5::Error error =
      error_of([&] { hdf5::checked_id(H5Fopen(missing.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT)); });
  EXPECT_EQ(error.major_id(), H5E_FILE);
  EXPECT_EQ(error.minor_id(), H5E_CANTOPENFILE);
  EXPECT_NE(error.description().find("No such file or directory"), std::string::npos)
      << error.description();
  EXPECT_EQ(error.description().find('\n'), std::string::npos) << error.description();
}

TEST(Hdf5Layer, OpeningAMissingFileGivesTheFileCodesAndOneLine) {
  TempDir dir;
  const hdf5::Error error =
      error_of([&] { hdf5::File::open(dir / "missing.h5", hdf5::Access::read_only); });
  EXPECT_EQ(error.major_id(), H5E_FILE);
  EXPECT_EQ(error.minor_id(), H5E_CANTOPENFILE);
  EXPECT_EQ(error.description(), "cannot open (No such file or directory)");
}

TEST(Hdf5Layer, AnEmptyErrorStackGivesTheFallback) {
  hdf5::silence();
  H5Eclear2(H5E_DEFAULT);
  const hdf5::Error error = hdf5::last_error("nothing failed");
  EXPECT_EQ(error.description(), "nothing failed");
  EXPECT_FALSE(error.is_checksum_mismatch());
}

TEST(Hdf5Layer, ADamagedChunkIsAChecksumMismatch) {
  TempDir dir;
  const auto path = dir / "values.h5";
  write_values(path);
  EXPECT_EQ(read_values(path).back(), static_cast<double>(kValues - 1));
  test::flip_byte(path, first_chunk_offset(path) + 8);  // inside the second value
  const hdf5::Error error = error_of([&] { read_values(path); });
  EXPECT_TRUE(error.is_checksum_mismatch()) << error.description();
  EXPECT_EQ(error.major_id(), H5E_STORAGE);
  EXPECT_EQ(error.minor_id(), H5E_READERROR);
  EXPECT_FALSE(error.is_lock_conflict());
}

TEST(Hdf5Layer, ReadingWithoutChecksumsRecoversADamagedChunk) {
  TempDir dir;
  const auto path = dir / "values.h5";
  write_values(path);
  test::flip_byte(path, first_chunk_offset(path) + 8 * 7);  // a byte of the eighth value
  const hdf5::File file = hdf5::File::open(path, hdf5::Access::read_only);
  const hdf5::Dataset dataset = hdf5::Dataset::open(file, "values");
  std::vector<double> values(kValues);
  dataset.read(H5T_NATIVE_DOUBLE, values.data(), 0, kValues, hdf5::Checksums::skipped);
  EXPECT_EQ(values[6], 6.0);
  EXPECT_NE(values[7], 7.0);
  EXPECT_EQ(values[8], 8.0);
}

TEST(Hdf5Layer, AFileLockedByAnotherOpenIsALockConflict) {
  TempDir dir;
  const auto path = dir / "values.h5";
  write_values(path);
  // HDF5 locks a file it opens for writing with flock; another open file description holds it.
  const int holder = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(holder, 0);
  ASSERT_EQ(::flock(holder, LOCK_EX | LOCK_NB), 0);
  const hdf5::Error error = error_of([&] { hdf5::File::open(path, hdf5::Access::read_write); });
  EXPECT_TRUE(error.is_lock_conflict()) << error.description();
  EXPECT_EQ(error.minor_id(), H5E_CANTLOCKFILE);
  EXPECT_EQ(error.description(), "in use by another process (the file is locked)");
  // Without HDF5's lock (a reader) the file opens.
  EXPECT_NO_THROW(hdf5::File::open(path, hdf5::Access::read_only, hdf5::Locking::off));
  ::close(holder);
}

TEST(Hdf5Layer, ATruncatedFileIsClassifiedByItsCode) {
  TempDir dir;
  const auto path = dir / "values.h5";
  write_values(path);
  std::filesystem::resize_file(path, std::filesystem::file_size(path) / 2);
  const hdf5::Error error = error_of([&] { hdf5::File::open(path, hdf5::Access::read_only); });
  EXPECT_TRUE(error.is_truncated_file()) << error.description();
  EXPECT_EQ(error.major_id(), H5E_FILE);
  EXPECT_EQ(error.description().rfind("damaged (truncated: ", 0), 0u) << error.description();
}

TEST(Hdf5Layer, AFileWithoutTheHdf5SignatureIsNotHdf5) {
  TempDir dir;
  const auto path = dir / "garbage.h5";
  test::write_file(path, std::vector<char>(4096, 'x'));
  const hdf5::Error error = error_of([&] { hdf5::File::open(path, hdf5::Access::read_only); });
  EXPECT_EQ(error.minor_id(), H5E_NOTHDF5);
  EXPECT_EQ(error.description().rfind("not an HDF5 file", 0), 0u) << error.description();
}

TEST(Hdf5Layer, TheMarkerCheckRefusesAForeignHdf5File) {
  TempDir dir;
  const auto foreign = dir / "foreign.h5";
  const auto result = run_command(std::string(kPython) +
                                  " -c 'import sys, h5py; h5py.File(sys.argv[1], \"w\")"
                                  "[\"values\"] = [1.0, 2.0]' " +
                                  quoted(foreign) + " 2>&1");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const hdf5::File file = hdf5::File::open(foreign, hdf5::Access::read_only);
  EXPECT_EQ(hdf5::format_marker_problem(file, kMarker),
            "not a fiber test file (an HDF5 file without the 'format' marker)");
}

TEST(Hdf5Layer, TheMarkerCheckNamesAnotherFormatOrVersion) {
  TempDir dir;
  const auto path = dir / "values.h5";
  write_values(path);
  const hdf5::File file = hdf5::File::open(path, hdf5::Access::read_only);
  EXPECT_EQ(hdf5::format_marker_problem(file, kMarker), std::nullopt);
  EXPECT_EQ(hdf5::format_marker_problem(file, {"fiber-other", 1, "other file"}),
            "not a fiber other file (its format is 'fiber-test', not 'fiber-other')");
  EXPECT_EQ(hdf5::format_marker_problem(file, {"fiber-test", 2, "test file"}),
            "unsupported test file version 1 (this program reads version 2)");
}

constexpr const char* kCopySource = R"(
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "w") as f:
    f.attrs["note"] = "hello"                      # a variable-length string
    f.attrs["shape"] = np.array([1, 2, 3], "i4")
    g = f.create_group("g", track_order=True)
    g.create_dataset("z", data=np.arange(10.0), chunks=(4,), maxshape=(None,))
    m = g.create_dataset("m", data=np.arange(9000.0).reshape(3000, 3), chunks=(1000, 3),
                         maxshape=(None, 3), fletcher32=True)
    m.attrs["unit"] = "m/s"
    g.create_dataset("a", data=np.arange(5, dtype="i8"))  # contiguous: copied as it is
    f.create_dataset("s", data=["x", "yy", "zzz"], dtype=h5py.string_dtype(), chunks=(2,),
                     maxshape=(None,))
    f["alias"] = h5py.SoftLink("/g/m")
    if len(sys.argv) > 2:
        f["elsewhere"] = h5py.ExternalLink("other.h5", "/x")
)";

constexpr const char* kCopyCheck = R"(
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r") as a, h5py.File(sys.argv[2], "r") as b:
    assert b.attrs["note"] == "hello" and list(b.attrs["shape"]) == [1, 2, 3], dict(b.attrs)
    assert list(b["g"]) == ["z", "m", "a"], list(b["g"])   # creation order kept
    for name in ("g/z", "g/m", "g/a", "s"):
        assert a[name].dtype == b[name].dtype and a[name].shape == b[name].shape, name
        assert np.array_equal(a[name][()], b[name][()]), name
    for name in ("g/z", "g/m"):
        d = b[name]
        assert (d.compression, d.compression_opts, d.shuffle, d.fletcher32) ==             ("gzip", 6, True, True), name
        assert d.chunks == a[name].chunks and d.maxshape == a[name].maxshape, name
    assert b["g/a"].chunks is None and b["g/a"].compression is None
    assert b["s"].chunks == (2,) and b["s"].compression is None  # variable-length: as it was
    assert b["g/m"].attrs["unit"] == "m/s"
    assert b.get("alias", getlink=True).path == "/g/m" and b["alias"].shape == (3000, 3)
print("copied")
)";

// Writes `script` beside the files and runs it with /usr/bin/python3 and `args`.
test::CommandResult run_python(const TempDir& dir, const char* script, const std::string& args) {
  const auto path = dir / "script.py";
  std::ofstream(path) << script;
  return run_command(std::string(kPython) + " " + quoted(path) + " " + args + " 2>&1");
}

// copy_contents: every group (its link order), attribute (strings too), link and dataset; the
// chunked ones (1-D, 2-D) re-created with the filters asked for, the others (contiguous,
// variable-length strings) as they are.
TEST(Hdf5Layer, AFileIsCopiedWholeWithOtherChunkFilters) {
  TempDir dir;
  const auto source = dir / "source.h5";
  const auto copy = dir / "copy.h5";
  const auto made = run_python(dir, kCopySource, quoted(source));
  ASSERT_EQ(made.exit_code, 0) << made.output;
  {
    const hdf5::File from = hdf5::File::open(source, hdf5::Access::read_only);
    const hdf5::File to = hdf5::File::create(copy);
    hdf5::copy_contents(from, to, {.deflate_level = 6});
  }
  const auto checked = run_python(dir, kCopyCheck, quoted(source) + " " + quoted(copy));
  EXPECT_EQ(checked.exit_code, 0) << checked.output;
}

// A link the copy cannot make (an external one) fails it, naming the link.
TEST(Hdf5Layer, AnExternalLinkIsNotCopied) {
  TempDir dir;
  const auto source = dir / "source.h5";
  const auto made = run_python(dir, kCopySource, quoted(source) + " external");
  ASSERT_EQ(made.exit_code, 0) << made.output;
  const hdf5::File from = hdf5::File::open(source, hdf5::Access::read_only);
  const hdf5::File to = hdf5::File::create(dir / "copy.h5");
  try {
    hdf5::copy_contents(from, to, {});
    ADD_FAILURE() << "an external link was copied";
  } catch (const hdf5::CopyError& error) {
    EXPECT_EQ(error.object(), "/elsewhere");
    EXPECT_NE(error.description().find("external"), std::string::npos) << error.description();
  }
}

TEST(Hdf5Layer, NamesWithASlashOrEmptyAreRefused) {
  for (const std::string& name : {std::string("a/b"), std::string("/"), std::string(""),
                                  std::string("."), std::string("a\0b", 3)}) {
    try {
      hdf5::check_name("test entry", name);
      ADD_FAILURE() << "'" << name << "' accepted";
    } catch (const std::invalid_argument& error) {
      EXPECT_EQ(std::string(error.what()).rfind("test entry name '", 0), 0u) << error.what();
    }
  }
  EXPECT_NO_THROW(hdf5::check_name("test entry", "theta"));
  EXPECT_NO_THROW(hdf5::check_name("test entry", ".."));
}

}  // namespace
}  // namespace fiber::rl
