#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "common/error.hpp"
#include "report/file_output.hpp"
#include "report/make_writers.hpp"
#include "sample_result.hpp"

using namespace attnbench;
namespace fs = std::filesystem;

namespace {

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A fresh directory removed at the end of the test.
struct scratch_dir {
  fs::path path = fs::temp_directory_path() / ("attnbench_report_test_" + std::to_string(::getpid()));
  scratch_dir() { fs::remove_all(path); }
  ~scratch_dir() { fs::remove_all(path); }
  size_t entries() const { return static_cast<size_t>(std::distance(fs::directory_iterator(path), {})); }
};

}  // namespace

TEST_CASE("write_file_atomic replaces and leaves no temp file", "[report]") {
  scratch_dir dir;
  fs::create_directories(dir.path);
  const fs::path file = dir.path / "a.txt";
  write_file_atomic(file, "first");
  write_file_atomic(file, "second\n");
  CHECK(read(file) == "second\n");
  CHECK(dir.entries() == 1);
  CHECK_THROWS_WITH(write_file_atomic(dir.path / "missing" / "b.txt", "x"),
                    Catch::Contains("missing/b.txt") && Catch::Contains("No such file"));
  CHECK(dir.entries() == 1);
}

TEST_CASE("write_reports refuses to overwrite without force", "[report]") {
  scratch_dir dir;
  const run_result r = testing::sample_result();
  const auto writers = make_writers({"json", "csv", "md"});
  const fs::path out = dir.path / "nested" / "out";

  write_reports(r, writers, out, false);  // creates the directories
  CHECK(dir.entries() == 1);
  CHECK(read(out / "results.json").rfind("{\n  \"schema_version\": 3,", 0) == 0);
  CHECK(fs::exists(out / "results.csv"));
  CHECK(fs::exists(out / "report.md"));

  // Only one target exists: still nothing may be written.
  fs::remove(out / "results.json");
  fs::remove(out / "report.md");
  std::ofstream(out / "results.csv") << "keep me";
  CHECK_THROWS_WITH(
      write_reports(r, writers, out, false),
      Catch::Contains("results.csv exists; pass --force to overwrite, or choose another --out"));
  CHECK(read(out / "results.csv") == "keep me");
  CHECK_FALSE(fs::exists(out / "results.json"));

  write_reports(r, writers, out, true);
  CHECK(read(out / "results.csv").rfind("name,status,", 0) == 0);
  size_t files = 0;
  for (const auto& entry : fs::directory_iterator(out)) {
    CHECK(entry.path().filename().string().find(".tmp-") == std::string::npos);
    ++files;
  }
  CHECK(files == 4);  // results.json, results.csv, report.md and its throughput.svg
}

TEST_CASE("output_problems: every problem before anything is written", "[report]") {
  scratch_dir dir;
  fs::create_directories(dir.path / "out");
  std::ofstream(dir.path / "out" / "compare.json") << "{}";
  std::ofstream(dir.path / "out" / "compare.md") << "#";
  const std::vector<fs::path> files = {dir.path / "out" / "compare.json", dir.path / "out" / "compare.md",
                                       dir.path / "new" / "deeper" / "junit.xml"};
  const std::vector<problem> found = output_problems(files, false, "--out", "--out");
  REQUIRE(found.size() == 2);
  CHECK(found[0].to_string() ==
        "--out: " + (dir.path / "out" / "compare.json").string() +
            " exists from an earlier run; pass --force to overwrite, or choose another --out");
  CHECK_THAT(found[1].message, Catch::StartsWith((dir.path / "out" / "compare.md").string()));
  CHECK(output_problems(files, true, "--out", "--out").empty());  // missing directories will be created
  CHECK(dir.entries() == 1);                                      // nothing created by checking

  std::ofstream(dir.path / "file") << "x";
  const std::vector<problem> unwritable =
      output_problems({dir.path / "file" / "a.xml", dir.path / "file" / "b.xml"}, true, "--junit", "--junit");
  REQUIRE(unwritable.size() == 1);  // once per directory
  CHECK(unwritable[0].to_string() == "--junit: " + (dir.path / "file").string() + " is not writable (" +
                                         (dir.path / "file").string() + " is not a writable directory)");
}

TEST_CASE("output_problems tries what run will do: a directory under /proc is refused", "[report][creatable]") {
  // Permission bits let root "write" /proc, but no directory can be made there: only trying tells.
  if (!fs::is_directory("/proc/self")) {
    WARN("skipped: no /proc");
    return;
  }
  const auto found = output_problems({fs::path("/proc/attnbench-out/results.json")}, true, "output.dir", "--out");
  REQUIRE(found.size() == 1);
  CHECK_THAT(found[0].message, Catch::StartsWith("/proc/attnbench-out is not writable (cannot create "
                                                 "/proc/attnbench-out: "));
  CHECK(!fs::exists("/proc/attnbench-out"));
  // An existing directory nothing can be created in.
  const auto existing = output_problems({fs::path("/proc/self/results.json")}, true, "output.dir", "--out");
  REQUIRE(existing.size() == 1);
  CHECK_THAT(existing[0].message, Catch::Contains("is not a writable directory"));
}

TEST_CASE("write_output_file creates the directory", "[report]") {
  scratch_dir dir;
  write_output_file(dir.path / "a" / "b" / "junit.xml", "<x/>\n");
  CHECK(read(dir.path / "a" / "b" / "junit.xml") == "<x/>\n");
}

TEST_CASE("write_reports reports an unusable directory", "[report]") {
  scratch_dir dir;
  fs::create_directories(dir.path);
  std::ofstream(dir.path / "file") << "x";
  CHECK_THROWS_AS(write_reports(testing::sample_result(), make_writers({"json"}), dir.path / "file", true),
                  input_error);
}

// A disk that fills part way (ATTNBENCH_TEST_WRITE_FAULT, the file-output layer's injection):
// the error names the file and the reason, and none of the set is left, complete-looking or not.
TEST_CASE("write_reports on a full disk: a clear error and none of the reports left behind", "[report][faults]") {
  scratch_dir dir;
  const run_result r = testing::sample_result();
  const auto writers = make_writers({"json", "csv", "md"});
  struct env_guard {
    ~env_guard() { ::unsetenv("ATTNBENCH_TEST_WRITE_FAULT"); }
  } guard;
  for (const char* failing : {"results.json", "report.md", "throughput.svg"}) {
    INFO(failing);
    ::setenv("ATTNBENCH_TEST_WRITE_FAULT", (std::string("ENOSPC:") + failing).c_str(), 1);
    CHECK_THROWS_WITH(write_reports(r, writers, dir.path, true),
                      Catch::Contains(failing) && Catch::Contains("No space left on device"));
    CHECK(dir.entries() == 0);  // not even the files written before the failing one
  }
  ::unsetenv("ATTNBENCH_TEST_WRITE_FAULT");
  // An earlier run's complete set is never replaced by a partial one.
  write_reports(r, writers, dir.path, true);
  const std::string before = read(dir.path / "results.json");
  ::setenv("ATTNBENCH_TEST_WRITE_FAULT", "EIO:results.csv", 1);
  CHECK_THROWS_WITH(write_reports(r, writers, dir.path, true), Catch::Contains("Input/output error"));
  CHECK(read(dir.path / "results.json") == before);
  CHECK(dir.entries() == 4);
}

TEST_CASE("write_file_atomic: a read-only directory, a path that is a file", "[report][faults]") {
  scratch_dir dir;
  fs::create_directories(dir.path);
  std::ofstream(dir.path / "file") << "x";
  CHECK_THROWS_WITH(write_file_atomic(dir.path / "file" / "results.json", "{}"),
                    Catch::Contains("cannot write") && Catch::Contains("results.json"));
  if (::geteuid() != 0) {  // root writes anywhere
    fs::create_directories(dir.path / "ro");
    fs::permissions(dir.path / "ro", fs::perms::owner_read | fs::perms::owner_exec);
    CHECK_THROWS_WITH(write_file_atomic(dir.path / "ro" / "a.txt", "x"), Catch::Contains("Permission denied"));
    fs::permissions(dir.path / "ro", fs::perms::owner_all);
  }
  for (const auto& e : fs::recursive_directory_iterator(dir.path))
    CHECK(e.path().filename().string().find(".tmp-") == std::string::npos);
}
