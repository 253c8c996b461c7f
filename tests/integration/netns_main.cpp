// main() of integration binaries: a private network namespace first, then the tests.
#include <gtest/gtest.h>

#include "tests/integration/private_netns.hpp"

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  rtotem::test::enter_private_netns();
  return RUN_ALL_TESTS();
}
