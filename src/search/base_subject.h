#pragma once

// The "base subject" of RFC 5256 §2.1, which SORT (SUBJECT) and both THREAD
// algorithms compare, and whether extracting it showed the message to be a
// reply or forward (RFC 5256 §3, REFERENCES step 5).
//
// Pure functions on strings; no I/O. Compiles with clang 14 as well (the
// fuzz build), so nothing here uses std::expected.

#include <string>
#include <string_view>

namespace peregrine::search {

struct BaseSubject {
  std::string text;  // the base subject, UTF-8, case preserved
  // The extraction removed a subj-refwd ("Re:", "Fwd:", "Fw:", with an
  // optional blob before the colon), a "(fwd)" trailer, or a
  // "[fwd: ...]" wrapper.
  bool reply_or_forward = false;

  bool operator==(const BaseSubject&) const = default;
};

// Steps (1)-(7) of RFC 5256 §2.1 on a subject whose RFC 2047 encoded words
// are already decoded to UTF-8 (mime::decode_header_value, or the cache
// record's subject): tabs, CR and LF become spaces, runs of spaces become
// one, then trailers, leaders, blobs and the [fwd: ...] wrapper are removed
// as the ABNF of §5 says. BLOBCHAR is 7-bit (RFC 5256 §5): a bracketed text
// with 8-bit bytes is not a blob.
BaseSubject extract_base_subject(std::string_view decoded_subject);

// The key i;ascii-casemap (RFC 4790 §9.2) compares: a-z upper-cased, every
// other byte as it is. Byte-wise comparison of two keys is the collation's
// ordering, and equal keys are equal subjects.
std::string ascii_casemap(std::string_view text);

}  // namespace peregrine::search
