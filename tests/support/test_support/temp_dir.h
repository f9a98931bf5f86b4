#pragma once

// A fresh directory under the system temp dir for one test, removed with
// everything in it at destruction.

#include <filesystem>
#include <set>
#include <string>
#include <string_view>

namespace peregrine::test_support {

class TempDir {
 public:
  // The directory is named "<prefix>-XXXXXX"; creating it failing fails the
  // test (the path is then empty).
  explicit TempDir(std::string_view prefix = "peregrine");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }

  // Writes `contents` to the file `name` inside the directory (binary).
  void write(const std::string& name, std::string_view contents) const;

  // The names of the directory's entries.
  std::set<std::string> names() const;

 private:
  std::filesystem::path path_;
};

}  // namespace peregrine::test_support
