#pragma once

// RFC 5322 address lists (with the RFC 822/2822 obsolete syntax) in the form
// IMAP's ENVELOPE wants: (name adl mailbox host), with group markers.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace peregrine::mime {

// One ENVELOPE address. nullopt is IMAP's NIL.
//  - an ordinary address: name (display phrase, or nullopt), adl (obsolete
//    source route "@a,@b", or nullopt), mailbox (local part), host (domain);
//  - the start of a group: name, adl and host nullopt, mailbox = group name;
//  - the end of a group: all four nullopt.
// name is the phrase as written, unquoted and with comments removed (CFWS
// between words becomes one space), RFC 2047 encoded words kept (ENVELOPE
// sends them raw); decoded_name() gives UTF-8. A comment is never the name:
// "user@host (Real Name)" has name nullopt (Dovecot would send "Real Name";
// RFC 3501's addr-name holds the phrase, and a bare addr-spec has none). A
// phrase with no address at all gives name, mailbox "" and host "".
// Dovecot's MISSING_MAILBOX / MISSING_DOMAIN / SYNTAX_ERROR placeholders are
// not used: a missing part is "".
// A mailbox with no domain (e.g. a bare "root") has host "" (never NIL,
// which IMAP would read as a group marker). A quoted local part is kept
// unquoted here; the IMAP writer re-quotes it.
struct Address {
  std::optional<std::string> name;
  std::optional<std::string> adl;
  std::optional<std::string> mailbox;
  std::optional<std::string> host;

  bool is_group_start() const { return mailbox && !host && !name && !adl; }
  bool is_group_end() const { return !name && !adl && !mailbox && !host; }

  bool operator==(const Address&) const = default;
};

// Parses an address-list header value (raw, may be folded, may hold 8-bit
// UTF-8 per RFC 6532). Never fails: what cannot be parsed is skipped to the
// next comma (a ';' outside a group counts as one too); an input of junk gives
// an empty list, and so do empty elements such as "<>". Bounded: at most
// kMaxAddresses entries are returned, and a group cut short still ends with
// its end marker.
std::vector<Address> parse_address_list(std::string_view value);

inline constexpr size_t kMaxAddresses = 10000;

// Display name as UTF-8 (RFC 2047 decoded), or "" when there is none.
std::string decoded_name(const Address& address);

// "mailbox@host" (or just mailbox when host is empty/NIL), for SORT and SEARCH.
std::string addr_spec(const Address& address);

}  // namespace peregrine::mime
