#pragma once

// glibc's malloc, set up for a server that keeps large arrays per mailbox
// (the hub's per-message data, SQLite's page caches) and reads them again
// after seconds of other work: one arena, whose heap is backed by
// transparent huge pages (madvise). A query then reaches its data through
// a few 2 MiB pages instead of hundreds of 4 KiB ones, and a page walk (or,
// on a virtual machine, a shadow page-table fault) per 4 KiB page is what
// a query after a pause paid for (docs/benchmarks.md, "Huge pages for the
// heap"). glibc reads these settings only from the environment at start,
// so the server runs itself again with them.

#include <optional>
#include <string>
#include <string_view>

namespace peregrine::base {

// GLIBC_TUNABLES as `current` (the value in the environment, possibly
// empty) with glibc.malloc.hugetlb=1 and glibc.malloc.arena_max=1 added,
// each only where `current` does not set that tunable already (an
// operator's value wins). Equal to `current` when both are set.
std::string tuned_glibc_tunables(std::string_view current);

// Executes this program again (/proc/self/exe, the same arguments) with
// GLIBC_TUNABLES from tuned_glibc_tunables, unless the environment holds
// them already. (A sanitizer build runs again too, though its allocator
// ignores them: the same steps in every build.) Returns only when it did
// not execute: with the value the process runs with when there was nothing
// to do, or nullopt when exec failed (logged as a warning; the server runs
// on with malloc's defaults).
std::optional<std::string> run_again_with_tuned_malloc(char** argv);

}  // namespace peregrine::base
