// The sanitizers' run-time options, built into the sanitizer build's test binary so that a test
// fails the same way under CTest, scripts/sanitize.sh or run by hand. ASAN_OPTIONS, UBSAN_OPTIONS
// and TSAN_OPTIONS in the environment still override them.
extern "C" {

// Leaks fail the test at exit; globals' constructors must not read each other's uninitialised
// state; a stack frame used after its function returned is caught too.
const char* __asan_default_options() {
  return "detect_leaks=1:check_initialization_order=1:strict_init_order=1:detect_stack_use_after_return=1";
}

// With -fno-sanitize-recover=undefined the first report already ends the test; the stack says where.
const char* __ubsan_default_options() { return "print_stacktrace=1:halt_on_error=1"; }

// The first data race ends the test with a failure, not a warning in a passing log.
const char* __tsan_default_options() { return "halt_on_error=1:second_deadlock_stack=1"; }

// Debian's cpp-httplib is a compiled library, not instrumented: TSan sees only the memcpy and
// memcmp it calls, not the synchronisation around them (its function-local statics are checked
// inline), and reported its two worker threads racing on its own heap block. Accesses those
// calls make from inside the library are ignored; our code on its threads (the /metrics handler,
// the registry) is still checked.
const char* __tsan_default_suppressions() { return "called_from_lib:libcpp-httplib.so\n"; }

}  // extern "C"
