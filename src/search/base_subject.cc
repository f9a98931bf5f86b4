#include "search/base_subject.h"

#include "base/ascii.h"

namespace peregrine::search {
namespace {

bool is_blob_char(char c) {
  auto u = static_cast<unsigned char>(c);
  return u >= 0x01 && u <= 0x7f && c != '[' && c != ']';
}

// subj-blob = "[" *BLOBCHAR "]" *WSP, at the start of `s`: its length, or 0.
size_t blob_length(std::string_view s) {
  if (s.empty() || s[0] != '[') {
    return 0;
  }
  size_t i = 1;
  while (i < s.size() && is_blob_char(s[i])) {
    ++i;
  }
  if (i >= s.size() || s[i] != ']') {
    return 0;
  }
  ++i;
  while (i < s.size() && base::is_wsp(s[i])) {
    ++i;
  }
  return i;
}

// subj-refwd = ("re" / ("fw" ["d"])) *WSP [subj-blob] ":", at the start of
// `s`: its length, or 0.
size_t refwd_length(std::string_view s) {
  size_t i = 0;
  if (base::istarts_with(s, "re")) {
    i = 2;
  } else if (base::istarts_with(s, "fwd")) {
    i = 3;
  } else if (base::istarts_with(s, "fw")) {
    i = 2;
  } else {
    return 0;
  }
  while (i < s.size() && base::is_wsp(s[i])) {
    ++i;
  }
  i += blob_length(s.substr(i));
  if (i >= s.size() || s[i] != ':') {
    return 0;
  }
  return i + 1;
}

// subj-leader = (*subj-blob subj-refwd) / WSP, at the start of `s`: its
// length (0 when none), and whether it was a subj-refwd.
//
// `plain_end` remembers where a run of blobs not followed by a subj-refwd
// ends: step (4) then removes those blobs one by one, and each start inside
// the run is known to begin no leader, so the run is scanned once, not once
// per blob.
size_t leader_length(std::string_view s, bool& refwd, const char*& plain_end) {
  refwd = false;
  if (!s.empty() && base::is_wsp(s[0])) {
    return 1;
  }
  if (s.data() < plain_end) {
    return 0;
  }
  size_t i = 0;
  for (;;) {
    if (size_t r = refwd_length(s.substr(i)); r > 0) {
      refwd = true;
      return i + r;
    }
    size_t b = blob_length(s.substr(i));
    if (b == 0) {
      plain_end = s.data() + i;
      return 0;
    }
    i += b;
  }
}

// Step (2): removes subj-trailer ("(fwd)" / WSP) from the end, repeatedly.
void remove_trailers(std::string_view& s, bool& reply) {
  for (;;) {
    if (!s.empty() && base::is_wsp(s.back())) {
      s.remove_suffix(1);
    } else if (s.size() >= 5 && base::iequals(s.substr(s.size() - 5), "(fwd)")) {
      s.remove_suffix(5);
      reply = true;
    } else {
      return;
    }
  }
}

}  // namespace

std::string ascii_casemap(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    c = base::ascii_upper(c);
  }
  return out;
}

BaseSubject extract_base_subject(std::string_view decoded_subject) {
  // (1) Tabs and continuations to spaces, runs of spaces to one.
  std::string normalized;
  normalized.reserve(decoded_subject.size());
  for (char c : decoded_subject) {
    if (c == '\t' || c == '\r' || c == '\n') {
      c = ' ';
    }
    if (c == ' ' && !normalized.empty() && normalized.back() == ' ') {
      continue;
    }
    normalized.push_back(c);
  }

  BaseSubject result;
  std::string_view s = normalized;
  for (;;) {
    remove_trailers(s, result.reply_or_forward);  // (2)
    // (3), (4), repeated until neither matches (5).
    const char* plain_end = nullptr;
    for (bool changed = true; changed;) {
      changed = false;
      bool refwd = false;
      while (size_t n = leader_length(s, refwd, plain_end)) {
        s.remove_prefix(n);
        result.reply_or_forward |= refwd;
        changed = true;
      }
      // A blob is removed only when a non-empty subj-base remains.
      if (size_t b = blob_length(s); b > 0 && b < s.size()) {
        s.remove_prefix(b);
        changed = true;
      }
    }
    // (6) "[fwd:" ... "]" around the whole text: remove both, back to (2).
    if (s.size() >= 6 && base::istarts_with(s, "[fwd:") && s.back() == ']') {
      s.remove_prefix(5);
      s.remove_suffix(1);
      result.reply_or_forward = true;
      continue;
    }
    break;
  }
  result.text = std::string(s);  // (7)
  return result;
}

}  // namespace peregrine::search
