#include "test_support/temp_dir.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>

namespace peregrine::test_support {

TempDir::TempDir(std::string_view prefix) {
  std::string templ =
      (std::filesystem::temp_directory_path() / (std::string(prefix) + "-XXXXXX")).string();
  char* made = ::mkdtemp(templ.data());
  EXPECT_NE(made, nullptr) << "mkdtemp " << templ;
  if (made != nullptr) {
    path_ = templ;
  }
}

TempDir::~TempDir() {
  if (path_.empty()) {
    return;
  }
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

void TempDir::write(const std::string& name, std::string_view contents) const {
  std::ofstream out(path_ / name, std::ios::binary);
  out << contents;
}

std::set<std::string> TempDir::names() const {
  std::set<std::string> out;
  for (const auto& entry : std::filesystem::directory_iterator(path_)) {
    out.insert(entry.path().filename().string());
  }
  return out;
}

}  // namespace peregrine::test_support
