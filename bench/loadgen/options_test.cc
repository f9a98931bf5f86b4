#include "bench/loadgen/options.h"

#include <gtest/gtest.h>

namespace peregrine::bench {
namespace {

TEST(Options, Presets) {
  auto mix = preset_mix("store");
  ASSERT_TRUE(mix);
  EXPECT_EQ((*mix)[static_cast<std::size_t>(Op::kStore)], 1);
  EXPECT_EQ((*mix)[static_cast<std::size_t>(Op::kList)], 0);
  auto all = preset_mix("mix");
  ASSERT_TRUE(all);
  for (double w : *all) {
    EXPECT_GT(w, 0);
  }
  EXPECT_FALSE(preset_mix("nonsense"));
}

TEST(Options, ParseMix) {
  std::string error;
  auto mix = parse_mix("login=1,list=2.5,idle=0", error);
  ASSERT_TRUE(mix) << error;
  EXPECT_EQ((*mix)[static_cast<std::size_t>(Op::kList)], 2.5);
  EXPECT_FALSE(parse_mix("bogus=1", error));
  EXPECT_FALSE(parse_mix("list=-1", error));
  EXPECT_FALSE(parse_mix("list=x", error));
  EXPECT_FALSE(parse_mix("list=0", error));
}

TEST(Options, UsersRoundRobin) {
  Options o;
  o.user_format = "bench%d";
  o.users = 3;
  EXPECT_EQ(o.user_for(0), "bench1");
  EXPECT_EQ(o.user_for(2), "bench3");
  EXPECT_EQ(o.user_for(3), "bench1");
}

TEST(Options, CommandLine) {
  const char* argv[] = {
      "peregrine-bench", "--port", "1143",      "--password", "pw", "--seconds", "2",
      "--workload",      "list",   "--clients", "4"};
  int code = -1;
  auto o = parse_options(static_cast<int>(std::size(argv)), const_cast<char**>(argv), code);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->port, 1143);
  EXPECT_EQ(o->clients, 4);
  EXPECT_EQ(o->mix[static_cast<std::size_t>(Op::kList)], 1);
  const char* bad[] = {"peregrine-bench", "--port", "1143", "--password", "pw"};
  EXPECT_FALSE(parse_options(static_cast<int>(std::size(bad)), const_cast<char**>(bad), code));
  EXPECT_EQ(code, 2);
}

}  // namespace
}  // namespace peregrine::bench
