#include "imap/proto/fetch_response.h"

#include <cstring>

#include "imap/proto/date_time.h"
#include "imap/proto/wire_string.h"
#include "mime/imap_output.h"

namespace peregrine::imap {

std::string_view apply_partial(std::string_view data, const std::optional<FetchPartial>& partial) {
  if (!partial) {
    return data;
  }
  if (partial->offset >= data.size()) {
    return {};
  }
  size_t offset = static_cast<size_t>(partial->offset);
  uint64_t room = data.size() - offset;
  return data.substr(offset, static_cast<size_t>(partial->length < room ? partial->length : room));
}

FetchResponse::FetchResponse(std::string& out, uint32_t seq) : out_(out) {
  out_ += "* ";
  append_number(out_, seq);
  out_ += " FETCH (";
}

void FetchResponse::next_item() {
  if (!first_) {
    out_ += ' ';
  }
  first_ = false;
}

FetchResponse& FetchResponse::uid(uint32_t uid) {
  next_item();
  out_ += "UID ";
  append_number(out_, uid);
  return *this;
}

FetchResponse& FetchResponse::flags(std::span<const std::string> flags) {
  next_item();
  out_ += "FLAGS (";
  for (size_t i = 0; i < flags.size(); ++i) {
    if (i > 0) {
      out_ += ' ';
    }
    out_ += flags[i];
  }
  out_ += ')';
  return *this;
}

FetchResponse& FetchResponse::internal_date(const mime::DateTime& date) {
  next_item();
  out_ += "INTERNALDATE ";
  append_date_time(out_, date);
  return *this;
}

FetchResponse& FetchResponse::rfc822_size(uint64_t size) {
  next_item();
  out_ += "RFC822.SIZE ";
  append_number(out_, size);
  return *this;
}

FetchResponse& FetchResponse::modseq(uint64_t modseq) {
  next_item();
  out_ += "MODSEQ (";
  append_number(out_, modseq);
  out_ += ')';
  return *this;
}

FetchResponse& FetchResponse::envelope(const mime::Envelope& envelope) {
  next_item();
  out_ += "ENVELOPE ";
  mime::append_envelope(out_, envelope);
  return *this;
}

FetchResponse& FetchResponse::body_structure(const mime::Part& root, bool extended) {
  next_item();
  out_ += extended ? "BODYSTRUCTURE " : "BODY ";
  mime::append_body_structure(out_, root, extended);
  return *this;
}

FetchResponse& FetchResponse::begin_literal(const FetchItem& item, uint64_t size,
                                            bool binary_literal) {
  next_item();
  append_fetch_item_name(out_, item);
  out_ += binary_literal ? " ~{" : " {";
  append_number(out_, size);
  out_ += "}\r\n";
  return *this;
}

FetchResponse& FetchResponse::section(const FetchItem& item, std::string_view data) {
  bool binary =
      item.attr == FetchAttr::kBinary && std::memchr(data.data(), '\0', data.size()) != nullptr;
  begin_literal(item, data.size(), binary);
  out_ += data;
  return *this;
}

FetchResponse& FetchResponse::section_nil(const FetchItem& item) {
  next_item();
  append_fetch_item_name(out_, item);
  out_ += " NIL";
  return *this;
}

FetchResponse& FetchResponse::binary_size(const FetchItem& item, uint64_t size) {
  next_item();
  append_fetch_item_name(out_, item);
  out_ += ' ';
  append_number(out_, size);
  return *this;
}

FetchResponse& FetchResponse::raw(std::string_view name, std::string_view value) {
  next_item();
  out_ += name;
  out_ += ' ';
  out_ += value;
  return *this;
}

void FetchResponse::finish() { out_ += ")\r\n"; }

}  // namespace peregrine::imap
