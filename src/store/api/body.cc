#include "store/api/body.h"

#include <algorithm>

namespace peregrine::store {

base::Result<std::string> Body::read(std::uint64_t offset, std::size_t length) const {
  std::uint64_t total = size();
  if (offset >= total) {
    return std::string();
  }
  std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(length, total - offset));
  std::string out(n, '\0');
  std::size_t done = 0;
  while (done < n) {
    auto got = read_into(offset + done, std::span<char>(out.data() + done, n - done));
    if (!got) {
      return std::unexpected(got.error());
    }
    if (*got == 0) {
      break;  // the file is shorter than it was: return what there is
    }
    done += *got;
  }
  out.resize(done);
  return out;
}

}  // namespace peregrine::store
