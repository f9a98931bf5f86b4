// mime_dump: prints what the MIME engine makes of message files, for
// debugging, for the Dovecot cross-check (tests/mime/dovecot_crosscheck.py)
// and to write the golden files src/mime/corpus_test.cc compares against.
//
// Usage:
//   mime_dump [--crlf] FILE...               human-readable dump
//   mime_dump [--crlf] --json FILE...        one JSON object per line per file
//   mime_dump --golden-dir DIR FILE...       writes DIR/<stem>.golden per file
//
// --crlf normalizes line ends first, as the store does at delivery: every LF
// not preceded by CR becomes CRLF; a lone CR is left alone. --golden-dir
// always normalizes (the goldens describe messages as stored).
//
// JSON output, one line per file:
//   {"file": "<basename>", "ENVELOPE": "(...)", "BODYSTRUCTURE": "(...)",
//    "BODY": "(...)", "RFC822.SIZE": "123",
//    "sections": {"HEADER.FIELDS (From To Cc Subject Date Message-ID Content-Type X-Missing)":
//                 "...", "HEADER.FIELDS.NOT (Received DKIM-Signature)": "...", "HEADER": "...",
//                 "TEXT": "...", "1": "...", "1.MIME": "...", "2": ..., "2.HEADER": ...,
//                 "2.TEXT": ..., "2.1": ..., ...}}
// Item values are exactly the bytes IMAP sends after the item name (ENVELOPE
// starts with "(", literals included as {n}CRLF...). Section values are the
// raw section content (not IMAP-quoted); a section that does not exist is
// null. Part numbers come from our own part tree, in pre-order, at most 30 per
// message; every part number N gets "N" and "N.MIME", and a message/rfc822
// part also "N.HEADER" and "N.TEXT".
//
// JSON CONTRACT (bytes in strings): the output is pure ASCII. A valid UTF-8
// sequence is written as its code point (\uXXXX, a surrogate pair above
// U+FFFF); every byte that is not part of valid UTF-8 (0x80-0xFF) is written
// as \udcXX, the lone surrogate of Python's "surrogateescape" error handler.
// Readers recover the exact bytes with
//     json.loads(line)[key].encode("utf-8", "surrogateescape")
// (what dovecot_crosscheck.py's json_bytes() does). \u00XX is NOT used for
// raw bytes: it would be ambiguous with a valid UTF-8 character U+00XX.
//
// Golden files (src/mime/corpus_test.cc reads them): two lines
//   ENVELOPE <value>
//   BODYSTRUCTURE <value>
// each ended by LF, where in <value> a backslash is written "\\", CR "\r",
// LF "\n", and any other byte below 0x20 (except TAB) or 0x7F as "\xHH";
// every other byte, 8-bit included, is written as is. corpus_test.cc has
// the same escaping; keep the two in step.
//
// Exit status: 0 when every file was read, 1 when a file could not be read
// or written (the others are still processed), 2 on a usage error.

#include <array>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mime/cache_record.h"
#include "mime/header.h"
#include "mime/imap_output.h"
#include "mime/part.h"
#include "mime/search_text.h"
#include "mime/section.h"

namespace peregrine::mime {
namespace {

constexpr size_t kMaxSectionParts = 30;
constexpr std::string_view kHeaderFieldsKey =
    "HEADER.FIELDS (From To Cc Subject Date Message-ID Content-Type X-Missing)";
constexpr std::string_view kHeaderFieldsNotKey = "HEADER.FIELDS.NOT (Received DKIM-Signature)";
const std::vector<std::string> kHeaderFields = {"From", "To",         "Cc",           "Subject",
                                                "Date", "Message-ID", "Content-Type", "X-Missing"};
const std::vector<std::string> kHeaderFieldsNot = {"Received", "DKIM-Signature"};

struct Options {
  bool crlf = false;
  bool json = false;
  std::optional<std::filesystem::path> golden_dir;
  std::vector<std::string> files;
};

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return std::nullopt;
  }
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) {
    return std::nullopt;
  }
  return data;
}

// Every LF not preceded by CR becomes CRLF; a lone CR stays.
std::string normalize_crlf(std::string_view in) {
  std::string out;
  out.reserve(in.size() + in.size() / 16);
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '\n' && (i == 0 || in[i - 1] != '\r')) {
      out.push_back('\r');
    }
    out.push_back(in[i]);
  }
  return out;
}

// ---------------------------------------------------------------- escaping

void append_hex(std::string& out, std::string_view prefix, uint32_t value, int digits) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.append(prefix);
  for (int shift = 4 * (digits - 1); shift >= 0; shift -= 4) {
    out.push_back(kHex[(value >> shift) & 0xF]);
  }
}

// Length of the valid UTF-8 sequence at s[i] and its code point, or 0 when
// s[i] does not start one (strict: no overlong forms, no surrogates, nothing
// above U+10FFFF — the same sequences Python's UTF-8 decoder accepts).
size_t utf8_sequence(std::string_view s, size_t i, uint32_t& code_point) {
  auto byte = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
  uint8_t b0 = byte(i);
  size_t len = 0;
  uint32_t min = 0;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2;
    min = 0x80;
    code_point = b0 & 0x1F;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3;
    min = 0x800;
    code_point = b0 & 0x0F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4;
    min = 0x10000;
    code_point = b0 & 0x07;
  } else {
    return 0;
  }
  if (s.size() - i < len) {
    return 0;
  }
  for (size_t k = 1; k < len; ++k) {
    uint8_t b = byte(i + k);
    if ((b & 0xC0) != 0x80) {
      return 0;
    }
    code_point = (code_point << 6) | (b & 0x3F);
  }
  if (code_point < min || code_point > 0x10FFFF || (code_point >= 0xD800 && code_point <= 0xDFFF)) {
    return 0;
  }
  return len;
}

// A JSON string per the contract in the file comment.
void append_json_string(std::string& out, std::string_view s) {
  out.push_back('"');
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<uint8_t>(s[i]);
    if (c >= 0x80) {
      uint32_t cp = 0;
      size_t len = utf8_sequence(s, i, cp);
      if (len == 0) {
        append_hex(out, "\\u", 0xDC00 + c, 4);
        i += 1;
      } else if (cp >= 0x10000) {
        append_hex(out, "\\u", 0xD800 + ((cp - 0x10000) >> 10), 4);
        append_hex(out, "\\u", 0xDC00 + ((cp - 0x10000) & 0x3FF), 4);
        i += len;
      } else {
        append_hex(out, "\\u", cp, 4);
        i += len;
      }
      continue;
    }
    switch (c) {
      case '"':
        out.append("\\\"");
        break;
      case '\\':
        out.append("\\\\");
        break;
      case '\n':
        out.append("\\n");
        break;
      case '\r':
        out.append("\\r");
        break;
      case '\t':
        out.append("\\t");
        break;
      default:
        if (c < 0x20 || c == 0x7F) {
          append_hex(out, "\\u", c, 4);
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
    ++i;
  }
  out.push_back('"');
}

void append_json_nullable(std::string& out, const std::optional<std::string>& s) {
  if (s) {
    append_json_string(out, *s);
  } else {
    out.append("null");
  }
}

// The golden-file escaping (see the file comment); also used to show values
// in the human-readable dump.
std::string escape_golden(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 16);
  for (char ch : s) {
    const auto c = static_cast<uint8_t>(ch);
    if (c == '\\') {
      out.append("\\\\");
    } else if (c == '\r') {
      out.append("\\r");
    } else if (c == '\n') {
      out.append("\\n");
    } else if ((c < 0x20 && c != '\t') || c == 0x7F) {
      append_hex(out, "\\x", c, 2);
    } else {
      out.push_back(ch);
    }
  }
  return out;
}

// ---------------------------------------------------------------- sections

struct PartNumber {
  std::vector<uint32_t> path;
  bool is_message = false;  // message/rfc822 (or global): HEADER and TEXT apply
};

std::string dotted(const std::vector<uint32_t>& path) {
  std::string s;
  for (uint32_t n : path) {
    if (!s.empty()) {
      s.push_back('.');
    }
    s += std::to_string(n);
  }
  return s;
}

// Whether BODYSTRUCTURE shows `part` as a message: parsed, or a
// message/rfc822 part left unparsed (shown with an empty body, section.h).
bool shown_as_message(const Part& part) {
  return part.kind == PartKind::kMessage || part.content_type.is("message", "rfc822");
}

// IMAP part numbers below `node`, whose own number is `path`, in pre-order
// (RFC 3501 §6.4.5): a multipart's children are path.1..n; a message's
// encapsulated message has its multipart children at path.1..n, or, when it
// is not multipart, its body at path.1. The empty parts BODYSTRUCTURE shows
// for a multipart without subparts and for an unparsed message/rfc822 part
// are path.1 (see PartMap in section.h).
void collect_part_numbers(const Part& node, const std::vector<uint32_t>& path,
                          std::vector<PartNumber>& out) {
  auto add = [&](const Part& part, std::vector<uint32_t> number) {
    if (out.size() >= kMaxSectionParts) {
      return;
    }
    out.push_back({number, shown_as_message(part)});
    collect_part_numbers(part, number, out);
  };
  auto add_empty_part = [&] {
    if (out.size() < kMaxSectionParts) {
      std::vector<uint32_t> number = path;
      number.push_back(1);
      out.push_back({std::move(number), false});
    }
  };
  if ((node.kind == PartKind::kMultipart && node.children.empty()) ||
      (node.kind != PartKind::kMessage && node.content_type.is("message", "rfc822"))) {
    add_empty_part();
  } else if (node.kind == PartKind::kMultipart) {
    for (size_t i = 0; i < node.children.size(); ++i) {
      std::vector<uint32_t> number = path;
      number.push_back(static_cast<uint32_t>(i + 1));
      add(node.children[i], std::move(number));
    }
  } else if (node.kind == PartKind::kMessage && !node.children.empty()) {
    const Part& inner = node.children.front();
    if (inner.kind == PartKind::kMultipart) {
      collect_part_numbers(inner, path, out);
    } else {
      std::vector<uint32_t> number = path;
      number.push_back(1);
      add(inner, std::move(number));
    }
  }
}

std::vector<PartNumber> part_numbers(const Part& root) {
  std::vector<PartNumber> out;
  if (root.kind == PartKind::kMultipart) {
    collect_part_numbers(root, {}, out);
  } else {
    out.push_back({{1}, shown_as_message(root)});
    collect_part_numbers(root, {1}, out);
  }
  return out;
}

std::optional<std::string> section(std::string_view message, const PartMap& parts,
                                   const SectionSpec& spec) {
  std::optional<SectionRange> range = resolve_section(parts, spec);
  if (!range || uint64_t{range->offset} + range->size > message.size()) {
    return std::nullopt;
  }
  std::string_view bytes = message.substr(range->offset, range->size);
  if (range->needs_filter) {
    return filter_header_fields(bytes, spec.fields, spec.text == SectionText::kHeaderFieldsNot);
  }
  return std::string(bytes);
}

// ---------------------------------------------------------------- outputs

std::string json_line(const std::string& name, std::string_view message, const Part& root,
                      const CacheRecord& record) {
  std::string out;
  out.reserve(2 * message.size() + 1024);
  out.append("{\"file\": ");
  append_json_string(out, name);
  out.append(", \"ENVELOPE\": ");
  append_json_string(out, record.envelope);
  out.append(", \"BODYSTRUCTURE\": ");
  append_json_string(out, record.bodystructure);
  out.append(", \"BODY\": ");
  append_json_string(out, record.body);
  out.append(", \"RFC822.SIZE\": ");
  append_json_string(out, std::to_string(message.size()));
  out.append(", \"sections\": {");

  bool first = true;
  auto emit = [&](std::string_view key, const SectionSpec& spec) {
    out.append(first ? "" : ", ");
    first = false;
    append_json_string(out, key);
    out.append(": ");
    append_json_nullable(out, section(message, record.parts, spec));
  };
  emit(kHeaderFieldsKey, {{}, SectionText::kHeaderFields, kHeaderFields});
  emit(kHeaderFieldsNotKey, {{}, SectionText::kHeaderFieldsNot, kHeaderFieldsNot});
  emit("HEADER", {{}, SectionText::kHeader, {}});
  emit("TEXT", {{}, SectionText::kText, {}});
  for (const PartNumber& number : part_numbers(root)) {
    std::string key = dotted(number.path);
    emit(key, {number.path, SectionText::kNone, {}});
    emit(key + ".MIME", {number.path, SectionText::kMime, {}});
    if (number.is_message) {
      emit(key + ".HEADER", {number.path, SectionText::kHeader, {}});
      emit(key + ".TEXT", {number.path, SectionText::kText, {}});
    }
  }
  out.append("}}\n");
  return out;
}

std::string golden_text(const CacheRecord& record) {
  return "ENVELOPE " + escape_golden(record.envelope) + "\nBODYSTRUCTURE " +
         escape_golden(record.bodystructure) + "\n";
}

std::string_view kind_name(PartKind kind) {
  switch (kind) {
    case PartKind::kLeaf:
      return "leaf";
    case PartKind::kMultipart:
      return "multipart";
    case PartKind::kMessage:
      return "message";
  }
  return "?";
}

// Shows at most `limit` bytes of a value, escaped.
std::string shown(std::string_view s, size_t limit = 200) {
  if (s.size() <= limit) {
    return escape_golden(s);
  }
  return escape_golden(s.substr(0, limit)) + "... (" + std::to_string(s.size()) + " bytes)";
}

void dump_part(std::string& out, const Part& part, const std::string& label, int depth) {
  std::string indent(2 * static_cast<size_t>(depth) + 2, ' ');
  out += indent + "[" + label + "] " + std::string(kind_name(part.kind)) + " " +
         part.content_type.type + "/" + part.content_type.subtype +
         (part.content_type_present ? "" : " (default)") + "\n";
  out += indent + "    header " + std::to_string(part.header_offset) + "+" +
         std::to_string(part.header_size) + ", body " + std::to_string(part.body_offset) + "+" +
         std::to_string(part.body_size) + ", " + std::to_string(part.body_lines) + " lines" +
         (part.kind == PartKind::kMultipart ? (part.closed ? ", closed" : ", not closed") : "") +
         "\n";
  for (const Param& p : part.content_type.params) {
    out += indent + "    param " + shown(p.name) + " = " + shown(p.value) +
           (p.extended ? " (rfc2231)" : "") + "\n";
  }
  auto field = [&](std::string_view name, const std::optional<std::string>& value) {
    if (value) {
      out += indent + "    " + std::string(name) + ": " + shown(*value) + "\n";
    }
  };
  field("encoding", part.content_transfer_encoding);
  field("id", part.content_id);
  field("description", part.content_description);
  field("md5", part.content_md5);
  field("location", part.content_location);
  if (part.disposition) {
    out += indent + "    disposition " + shown(part.disposition->type) + "\n";
    for (const Param& p : part.disposition->params) {
      out += indent + "      param " + shown(p.name) + " = " + shown(p.value) +
             (p.extended ? " (rfc2231)" : "") + "\n";
    }
  }
  for (const std::string& language : part.content_language) {
    out += indent + "    language " + shown(language) + "\n";
  }
  if (part.envelope) {
    std::string envelope;
    append_envelope(envelope, *part.envelope);
    out += indent + "    envelope " + shown(envelope, 400) + "\n";
  }
  for (size_t i = 0; i < part.children.size(); ++i) {
    std::string child_label = part.kind == PartKind::kMessage
                                  ? label + "/msg"
                                  : label + (label.empty() ? "" : ".") + std::to_string(i + 1);
    dump_part(out, part.children[i], child_label, depth + 1);
  }
}

std::string human_dump(const std::string& name, std::string_view message, const Part& root,
                       const CacheRecord& record, bool crlf) {
  std::string out = "== " + name + " (" + std::to_string(message.size()) + " bytes" +
                    (crlf ? ", CRLF-normalized" : "") + ")\n";
  out += "ENVELOPE " + shown(record.envelope, 4000) + "\n";
  out += "BODY " + shown(record.body, 4000) + "\n";
  out += "BODYSTRUCTURE " + shown(record.bodystructure, 4000) + "\n";
  out += "parts: " + std::to_string(count_parts(root)) + " (labels: [] the message, [2/msg] " +
         "the message inside part 2)\n";
  dump_part(out, root, "", 0);

  out += "part map (pre-order):\n";
  for (const PartSpan& s : record.parts.nodes()) {
    out += "  " + std::string(kind_name(s.kind)) + " header " + std::to_string(s.header_offset) +
           "+" + std::to_string(s.header_size) + " body " + std::to_string(s.body_offset) + "+" +
           std::to_string(s.body_size) + " subtree " + std::to_string(s.subtree_size) + "\n";
  }
  out += "sections:";
  for (const PartNumber& number : part_numbers(root)) {
    out += " " + dotted(number.path);
  }
  out += "\n";

  out += "sort/thread keys:\n";
  out += "  subject " + shown(record.subject) + "\n";
  out += "  from " + shown(record.from_mailbox) + " / " + shown(record.from_display) + "\n";
  out += "  to " + shown(record.to_mailbox) + " / " + shown(record.to_display) + "\n";
  out += "  cc " + shown(record.cc_mailbox) + " / " + shown(record.cc_display) + "\n";
  out += "  date " +
         (record.sent_date ? std::to_string(record.sent_date->utc_seconds) + " tz " +
                                 std::to_string(record.sent_date->tz_offset_minutes)
                           : std::string("none")) +
         "\n";
  out += "  message-id " + shown(record.message_id) + "\n";
  for (const std::string& id : record.references) {
    out += "  reference " + shown(id) + "\n";
  }

  SearchText text = build_search_text(message, root);
  out += "search text:\n";
  out += "  from " + shown(text.from) + "\n";
  out += "  to " + shown(text.to) + "\n";
  out += "  cc " + shown(text.cc) + "\n";
  out += "  bcc " + shown(text.bcc) + "\n";
  out += "  subject " + shown(text.subject) + "\n";
  out += "  headers " + shown(text.headers, 2000) + "\n";
  out += "  body " + shown(text.body, 2000) + "\n";
  return out;
}

// ---------------------------------------------------------------- main

int usage() {
  std::cerr << "usage: mime_dump [--crlf] [--json] FILE...\n"
               "       mime_dump --golden-dir DIR FILE...\n";
  return 2;
}

std::optional<Options> parse_options(int argc, char** argv) {
  Options options;
  bool files_only = false;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (files_only || arg.empty() || arg[0] != '-') {
      options.files.emplace_back(arg);
    } else if (arg == "--") {
      files_only = true;
    } else if (arg == "--crlf") {
      options.crlf = true;
    } else if (arg == "--json") {
      options.json = true;
    } else if (arg == "--golden-dir" && i + 1 < argc) {
      options.golden_dir = argv[++i];
      options.crlf = true;
    } else {
      return std::nullopt;
    }
  }
  if (options.files.empty() || (options.json && options.golden_dir)) {
    return std::nullopt;
  }
  return options;
}

int run(const Options& options) {
  int status = 0;
  for (const std::string& path : options.files) {
    std::optional<std::string> data = read_file(path);
    if (!data) {
      std::cerr << "mime_dump: cannot read " << path << "\n";
      status = 1;
      continue;
    }
    std::string message = options.crlf ? normalize_crlf(*data) : std::move(*data);
    const Part root = parse_message(message);
    const CacheRecord record = build_cache_record(message, root);
    const std::filesystem::path fs_path(path);
    const std::string name = fs_path.filename().string();

    if (options.golden_dir) {
      std::filesystem::path out_path = *options.golden_dir / (fs_path.stem().string() + ".golden");
      std::ofstream out(out_path, std::ios::binary | std::ios::trunc);
      out << golden_text(record);
      out.close();
      if (!out) {
        std::cerr << "mime_dump: cannot write " << out_path << "\n";
        status = 1;
      }
    } else if (options.json) {
      std::cout << json_line(name, message, root, record);
    } else {
      std::cout << human_dump(name, message, root, record, options.crlf) << "\n";
    }
  }
  std::cout.flush();
  return std::cout ? status : 1;
}

}  // namespace
}  // namespace peregrine::mime

int main(int argc, char** argv) {
  std::optional<peregrine::mime::Options> options = peregrine::mime::parse_options(argc, argv);
  if (!options) {
    return peregrine::mime::usage();
  }
  return peregrine::mime::run(*options);
}
