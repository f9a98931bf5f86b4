#pragma once

// A session's SelectedView as the message view search::evaluate runs over
// (also for SORT and THREAD). Internal to imap/server.

#include "imap/server/mailbox_hub.h"
#include "imap/server/selected_view.h"
#include "search/search_program.h"

namespace peregrine::imap {

class SearchView final : public search::MessageView {
 public:
  explicit SearchView(const SelectedView& view) : view_(view) {}

  std::string_view mailbox() const override { return view_.hub().name(); }
  std::uint32_t count() const override { return view_.count(); }
  store::Uid uid_at(std::uint32_t seq) const override { return view_.uid_at(seq); }
  const store::MessageMeta* meta_at(std::uint32_t seq) const override { return view_.meta_at(seq); }
  bool is_recent(store::Uid uid) const override { return view_.is_recent(uid); }
  void fill(std::vector<store::Uid>& uids, std::vector<char>& present) const override {
    view_.fill(uids, present);
  }
  std::optional<store::SystemFlags> flags_at(std::uint32_t seq) const override {
    return view_.flags_at(seq);
  }

 private:
  const SelectedView& view_;
};

}  // namespace peregrine::imap
