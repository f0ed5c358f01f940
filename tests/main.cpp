// The Catch2 test runner: the only translation unit that defines main().
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
